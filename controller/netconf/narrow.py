"""The narrowest core read a subtree filter allows (RFC 6241 6.2.3, 6.2.5), as pure functions.

From one top-level filter node, the walk goes down while the filter node has exactly one child
and that child is a containment or selection node (6.2.3, 6.2.4) naming, in its own namespace,
a container or a list entry whose every key is given once as a content match node (6.2.5).
The read of the resulting data path holds every node the whole filter could select: each
filter node above the target selects only through the one child it names, and the keys leave
one candidate entry. The whole filter is then applied to the target wrapped in its ancestors
(:func:`wrap`), so selection nodes, other content matches and attribute matches (6.2.2) give
the result a read of the whole container would.

Key values are taken as they are written only where that is exact: a value with ``:`` (an
identityref or instance-identifier names its module by an XML prefix) stops the walk.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from lxml import etree

from controller.errors import CatsError
from controller.model.paths import NodeKind, SchemaNode, step_data_path
from controller.netconf.edits import SchemaLookup
from controller.types import DataPath, Element

_NARROWS = (NodeKind.CONTAINER, NodeKind.LIST)


@dataclass(frozen=True, slots=True)
class Narrowed:
    """A read for one top-level filter node: the data path and the nodes above its target."""

    path: DataPath
    ancestors: tuple[SchemaNode, ...]  # outermost first; empty when the target is top-level

    @property
    def narrowed(self) -> bool:
        """Whether the read is below the top-level node."""
        return bool(self.ancestors)


def _elements(node: Element) -> list[Element]:
    return [child for child in node if isinstance(child.tag, str)]


def _is_content_match(node: Element) -> bool:
    return not _elements(node) and bool((node.text or "").strip())


def key_values(selector: Element, node: SchemaNode) -> tuple[str, ...] | None:
    """The key values of a list entry filter node, when every key is one content match."""
    values: list[str] = []
    for key in node.keys:
        found = selector.findall(f"{{{node.namespace}}}{key}")
        if len(found) != 1 or not _is_content_match(found[0]):
            return None
        value = (found[0].text or "").strip()
        if ":" in value:
            return None
        values.append(value)
    return tuple(values)


def narrow(selector: Element, top: SchemaNode, lookup: SchemaLookup) -> Narrowed:
    """The narrowest read for ``selector``, a top-level filter node that names ``top``."""
    path = f"/{top.qualified_name}"
    ancestors: list[SchemaNode] = []
    node = top
    while True:
        children = _elements(selector)
        if len(children) != 1 or _is_content_match(children[0]):
            break
        qname = etree.QName(children[0])
        module = lookup.module_of(qname.namespace) if qname.namespace else None
        child = lookup.child(node, module, qname.localname) if module else None
        if child is None or child.kind not in _NARROWS:
            break
        values = key_values(children[0], child) if child.kind is NodeKind.LIST else None
        if child.kind is NodeKind.LIST and values is None:
            break
        try:
            step = step_data_path(child, values, qualify=child.module != node.module)
        except CatsError:  # a key value with both quote characters
            break
        path = f"{path}/{step}"
        ancestors.append(node)
        node, selector = child, children[0]
    return Narrowed(DataPath(path), tuple(ancestors))


def wrap(target: list[Element], ancestors: tuple[SchemaNode, ...]) -> list[Element]:
    """The target elements inside their ancestors, as the top-level elements of a read."""
    if not ancestors or not target:
        return target
    # The prefixes the targets declare (identityref values, see parse_fragment) move up to the
    # new top: lxml drops them from an element appended under the same default namespace.
    prefixes = {p: uri for e in target for p, uri in e.nsmap.items() if p is not None}
    top = etree.Element(_tag(ancestors[0]), nsmap={None: ancestors[0].namespace, **prefixes})
    parent = top
    for above, node in pairwise(ancestors):
        nsmap = {None: node.namespace} if node.namespace != above.namespace else None
        parent = etree.SubElement(parent, _tag(node), nsmap=nsmap)
    for element in target:
        parent.append(element)
    return [top]


def _tag(node: SchemaNode) -> str:
    return f"{{{node.namespace}}}{node.name}"
