"""``<config>`` of edit-config and edit-data to the core's edits (RFC 6241 7.2, RFC 7950 7.8.6).

Each element carrying an ``operation`` attribute is an operation point and becomes one
:class:`~controller.datastore.api.Edit` whose value is that element (without the operation
attributes of its descendants that are operation points themselves, which follow as edits of
their own). The rest is merged, narrowed to the smallest subtrees that hold it so that a
single-entry edit touches one entry, or ignored under default-operation ``none``.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Protocol

from lxml import etree

from controller.datastore.api import Edit, EditOperation, InsertWhere
from controller.errors import ErrorType
from controller.model import Encoding
from controller.model.paths import ROOT, NodeKind, SchemaNode, step_data_path
from controller.netconf.errors import NetconfError, netconf_error
from controller.netconf.messages import BASE_NS, split_steps
from controller.netconf.values import json_value
from controller.types import DataPath, Element

OPERATION = f"{{{BASE_NS}}}operation"
YANG_NS = "urn:ietf:params:xml:ns:yang:1"
_INSERT, _KEY, _VALUE = (f"{{{YANG_NS}}}{name}" for name in ("insert", "key", "value"))
_POINT_OPS = {
    op.value: op
    for op in (
        EditOperation.MERGE,
        EditOperation.REPLACE,
        EditOperation.CREATE,
        EditOperation.DELETE,
        EditOperation.REMOVE,
    )
}
_REMOVING = (EditOperation.DELETE, EditOperation.REMOVE)
#: A container with more children than this is merged as one edit rather than one per child.
SPLIT_LIMIT = 64
_ANY = (NodeKind.ANYXML, NodeKind.ANYDATA)
_TOP = ""  # the base of a top-level node's data path


class SchemaLookup(Protocol):
    """What the conversion asks of the schema (model.paths.PathResolver provides it)."""

    def child(self, parent: SchemaNode | None, module: str, name: str) -> SchemaNode | None:
        """The child ``module:name`` of a node, or a top-level node when parent is None."""
        ...

    def module_of(self, namespace: str) -> str | None:
        """The implemented module of an XML namespace, or None."""
        ...

    def prefix_of(self, namespace: str) -> str | None:
        """The YANG prefix of the module of an XML namespace, or None."""
        ...


def _elements(node: Element) -> list[Element]:
    return [child for child in node if isinstance(child.tag, str)]


def _operation(element: Element) -> EditOperation | None:
    raw = element.get(OPERATION)
    if raw is None:
        return None
    found = _POINT_OPS.get(raw)
    if found is None:
        raise netconf_error(
            "bad-attribute",
            f"unknown operation {raw!r}",
            info=(("bad-attribute", "operation"), ("bad-element", etree.QName(element).localname)),
        )
    return found


class ConfigEdits:
    """Converts one ``<config>`` into edits against one schema."""

    def __init__(self, lookup: SchemaLookup) -> None:
        self._lookup = lookup

    def edits(self, config: Element, default: EditOperation | None) -> list[Edit]:
        """The edits of a ``<config>``; ``default`` None is default-operation ``none``.

        Raises:
            NetconfError: ``unknown-namespace``, ``unknown-element``, ``missing-element`` (a
                list entry without its keys) or ``bad-attribute``, before anything is applied.
        """
        if default is EditOperation.REPLACE:
            return self._replace_all(config)
        found: list[Edit] = []
        for top in _elements(config):
            self._walk(top, None, _TOP, default, found)
        return found

    def levels(self, config: Element) -> list[DataPath]:
        """Under default-operation ``none``: the list entries and presence containers the
        ``<config>`` names outside every operation point, each of which must exist (RFC 6241
        7.2: "data for which there is not a corresponding level ... data-missing"). A
        non-presence container has no existence of its own, so it is no level."""
        found: list[DataPath] = []
        for top in _elements(config):
            self._levels(top, None, _TOP, found)
        return found

    def _levels(
        self, element: Element, parent: SchemaNode | None, base: str, found: list[DataPath]
    ) -> None:
        if _operation(element) is not None:
            return
        node = self._node(element, parent)
        if node.kind in (NodeKind.LEAF, NodeKind.LEAF_LIST, *_ANY):
            return
        path = self._path(element, node, parent, base)
        if node.kind is NodeKind.LIST or node.presence:
            found.append(path)
        for child in _elements(element):
            if node.kind is NodeKind.LIST and etree.QName(child).localname in node.keys:
                continue
            self._levels(child, node, path, found)

    def _replace_all(self, config: Element) -> list[Edit]:
        """default-operation replace: the config replaces the whole datastore (7.2)."""
        kept = deepcopy(config)
        extra: list[Edit] = []
        for top in _elements(kept):
            node = self._node(top, None)
            path = self._path(top, node, None, _TOP)
            top.attrib.pop(OPERATION, None)
            self._prune(top, node, path, EditOperation.REPLACE, extra)
        body = b"".join(etree.tostring(_scoped(top)) for top in _elements(kept))
        whole = Edit(EditOperation.REPLACE, ROOT, body.decode(), Encoding.XML)
        return [whole, *(edit for edit in extra if edit.operation not in _REMOVING)]

    # ---------------------------------------------------------------- walking

    def action(self, holder: Element) -> tuple[DataPath, str]:
        """The data path and YANG-form XML of an ``<action>`` (RFC 7950 7.15.2).

        Raises:
            NetconfError: ``missing-element`` without an action node, ``unknown-*`` as in edits.
        """
        tops = _elements(holder)
        if len(tops) != 1:
            raise netconf_error(
                "missing-element",
                "an action holds one data tree",
                info=(("bad-element", "action"),),
            )
        element, parent, path = tops[0], None, _TOP
        while True:
            node = self._node(element, parent, operations=True)
            path = self._path(element, node, parent, path)
            if node.kind is NodeKind.ACTION:
                return path, etree.tostring(tops[0]).decode()
            if node.is_operation or node.kind in (NodeKind.LEAF, NodeKind.LEAF_LIST):
                break
            keys = node.keys if node.kind is NodeKind.LIST else ()
            inner = [c for c in _elements(element) if etree.QName(c).localname not in keys]
            if len(inner) != 1:
                break
            element, parent = inner[0], node
        raise netconf_error(
            "missing-element",
            "the action's data tree names no action",
            info=(("bad-element", "action"),),
        )

    def _node(
        self, element: Element, parent: SchemaNode | None, *, operations: bool = False
    ) -> SchemaNode:
        qname = etree.QName(element)
        for attribute in element.attrib:
            if attribute != OPERATION and etree.QName(attribute).namespace == BASE_NS:
                raise netconf_error(
                    "unknown-attribute",
                    f"no attribute {etree.QName(attribute).localname!r} in the base namespace",
                    info=(
                        ("bad-attribute", etree.QName(attribute).localname),
                        ("bad-element", qname.localname),
                    ),
                )
        module = self._lookup.module_of(qname.namespace or "")
        if module is None:
            raise netconf_error(
                "unknown-namespace",
                f"no module has the namespace {qname.namespace!r}",
                error_type=ErrorType.APPLICATION,
                info=(("bad-element", qname.localname), ("bad-namespace", qname.namespace or "")),
            )
        node = self._lookup.child(parent, module, qname.localname)
        if (
            node is None
            or node.kind is NodeKind.NOTIFICATION
            or (node.is_operation and not operations)
        ):
            raise netconf_error(
                "unknown-element",
                f"no schema node {module}:{qname.localname} here",
                error_type=ErrorType.APPLICATION,
                info=(("bad-element", qname.localname),),
            )
        return node

    def _path(
        self, element: Element, node: SchemaNode, parent: SchemaNode | None, base: str
    ) -> DataPath:
        """The data path of ``element`` (``node``) under the data path ``base`` ("" at the top)."""
        values: tuple[str, ...] | None = None
        if node.kind is NodeKind.LIST:
            values = tuple(self._key(element, node, key) for key in node.keys)
        elif node.kind is NodeKind.LEAF_LIST:
            values = (self._value(element, node),)
        qualify = parent is None or parent.module != node.module
        try:
            return DataPath(f"{base}/{step_data_path(node, values, qualify=qualify)}")
        except NetconfError:
            raise
        except Exception as exc:
            raise netconf_error(
                "invalid-value", str(exc), error_type=ErrorType.APPLICATION
            ) from exc

    def _key(self, element: Element, node: SchemaNode, key: str) -> str:
        found = element.find(f"{{{node.namespace}}}{key}")
        if found is None:
            raise netconf_error(
                "missing-element",
                f"list entry {node.name!r} without its key {key!r}",
                error_type=ErrorType.APPLICATION,
                info=(("bad-element", key),),
            )
        leaf = self._lookup.child(node, node.module, key)
        return self._value(found, leaf) if leaf is not None else (found.text or "").strip()

    def _value(self, element: Element, node: SchemaNode) -> str:
        """A key or leaf-list value as a data path takes it: an identityref or
        instance-identifier with module names for its XML prefixes (values.py); a prefix
        bound to no module is left for the parser to refuse."""
        text = (element.text or "").strip()
        if not node.qualified_values:
            return text
        try:
            return json_value(text, element.nsmap, self._lookup.module_of)
        except NetconfError:
            return text

    def _walk(
        self,
        element: Element,
        parent: SchemaNode | None,
        base: str,
        inherited: EditOperation | None,
        found: list[Edit],
    ) -> None:
        node = self._node(element, parent)
        path = self._path(element, node, parent, base)
        operation = _operation(element)
        if node.kind in _ANY:  # its content is a value, not schema nodes (RFC 7950 7.10, 7.11)
            chosen = operation or inherited
            if chosen is not None:
                self._point(element, node, path, chosen, found)
            return
        if operation is not None and operation is not inherited:
            self._point(element, node, path, operation, found)
            return
        if inherited is EditOperation.MERGE or inherited is EditOperation.CREATE:
            if node.kind is NodeKind.CONTAINER and 0 < len(_elements(element)) <= SPLIT_LIMIT:
                for child in _elements(element):
                    self._walk(child, node, path, inherited, found)
                return
            self._point(element, node, path, inherited, found)
            return
        for child in _elements(element):  # none (or replace inherited): operation points only
            if node.kind is NodeKind.LIST and etree.QName(child).localname in node.keys:
                continue
            self._walk(child, node, path, inherited, found)

    def _point(
        self,
        element: Element,
        node: SchemaNode,
        path: DataPath,
        operation: EditOperation,
        found: list[Edit],
    ) -> None:
        base = "".join(f"/{step}" for step in split_steps(path)[:-1])
        if operation in _REMOVING:
            found.append(Edit(operation, path))
            return
        value = deepcopy(element)
        nested: list[Edit] = []
        self._prune(value, node, path, operation, nested)
        where, point = self._insert(element, node, base)
        for attribute in (OPERATION, _INSERT, _KEY, _VALUE):
            value.attrib.pop(attribute, None)
        text = etree.tostring(_scoped(value, element)).decode()
        found.append(Edit(operation, path, text, Encoding.XML, where, point))
        found.extend(nested)

    def _prune(
        self,
        value: Element,
        node: SchemaNode,
        path: DataPath,
        operation: EditOperation,
        out: list[Edit],
    ) -> None:
        """Strip operation attributes under ``value`` (at ``path``); operation points that
        differ from ``operation`` leave the value and become edits in ``out``. The content of
        an anyxml or anydata node is its value and stays as it is."""
        if node.kind in _ANY:
            return
        for child in _elements(value):
            child_node = self._node(child, node)
            if (
                child_node.kind in (NodeKind.LEAF, NodeKind.LEAF_LIST)
                and child.get(OPERATION) is None
            ):
                continue
            child_path = self._path(child, child_node, node, path)
            own = _operation(child)
            if own is not None and own is not operation:
                self._point(child, child_node, child_path, own, out)
                value.remove(child)
                continue
            child.attrib.pop(OPERATION, None)
            self._prune(child, child_node, child_path, operation, out)

    def _insert(
        self, element: Element, node: SchemaNode, base: str
    ) -> tuple[InsertWhere | None, DataPath | None]:
        raw = element.get(_INSERT)
        if raw is None:
            return None, None
        try:
            where = InsertWhere(raw)
        except ValueError as exc:
            raise netconf_error(
                "bad-attribute", f"bad insert {raw!r}", info=(("bad-attribute", "insert"),)
            ) from exc
        if where not in (InsertWhere.BEFORE, InsertWhere.AFTER):
            return where, None
        anchor = element.get(_KEY if node.kind is NodeKind.LIST else _VALUE)
        if anchor is None:
            raise netconf_error(
                "missing-attribute",
                f"insert {raw} needs a key or value attribute",
                info=(("bad-attribute", "key" if node.kind is NodeKind.LIST else "value"),),
            )
        step = node.qualified_name  # libyang takes a module name on any step
        if node.kind is NodeKind.LIST:
            return where, DataPath(f"{base}/{step}{_unprefix(anchor)}")
        return where, DataPath(f"{base}/{step}[.='{anchor}']")


def _scoped(value: Element, original: Element | None = None) -> Element:
    """``value`` declaring every prefix in scope where ``original`` (or it) stood.

    lxml serializes a subtree with the namespaces its tags use only, but an identityref or
    instance-identifier value uses prefixes in its text (RFC 7950 9.10.3), bound perhaps on
    ``<config>``; libyang would find them unbound.
    """
    scope = (original if original is not None else value).nsmap
    top = etree.Element(value.tag, attrib=dict(value.attrib), nsmap=scope)
    top.text = value.text
    top.extend(list(value))
    return top


def _unprefix(predicates: str) -> str:
    """``[ex:name='x']`` (RFC 7950 7.8.6 key attribute) as ``[name='x']``."""
    out: list[str] = []
    for part in predicates.split("["):
        if not part:
            continue
        name, sep, rest = part.partition("=")
        out.append("[" + name.split(":")[-1].strip() + sep + rest)
    return "".join(out)
