"""Reads for get, get-config and get-data: the core's XML, filtered (RFC 6241 6, 8.9; RFC 6243).

A subtree filter is applied to the core's document by :mod:`controller.netconf.subtree`. Only
what the filter can select is read: each top-level container it names alone, and below it the
data path :mod:`controller.netconf.narrow` finds (one list entry by its keys, say), wrapped in
its ancestors before the whole filter is applied. An XPath filter (RFC 6241 8.9) is handed to
the core with its XML prefixes rewritten to module names.

A read that needs no work on elements (no filter, or a subtree filter of selection nodes
naming whole top-level containers, RFC 6241 6.2.4) is answered with the core's printed text
as it is (:meth:`Reads.read_raw`), spliced into the reply without parsing and serializing
it again: a full read of 100k list entries is then libyang's printing and the transport.
A filter of containment nodes (containers) and selection nodes alone, such as
``<bench><entry/></bench>``, is applied by the core on its tree (``ReadRequest.selection``)
and spliced likewise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from lxml import etree

from controller.datastore.api import (
    Content,
    DatastoreName,
    Principal,
    ReadRequest,
    ReadResult,
    WithDefaults,
)
from controller.errors import CatsError, ErrorType
from controller.model import Encoding
from controller.model.paths import NodeKind, SchemaNode
from controller.netconf.edits import SchemaLookup
from controller.netconf.errors import netconf_error
from controller.netconf.messages import BASE_NS, parse_fragment
from controller.netconf.narrow import narrow, wrap
from controller.netconf.subtree import subtree_filter
from controller.types import DataPath, Element

WD_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-with-defaults"
#: RFC 6243 6: the attribute of report-all-tagged, as NETCONF names it.
WD_ATTRIBUTE_NS = "urn:ietf:params:xml:ns:netconf:default:1.0"
_QNAME = re.compile(r"""('[^']*'|"[^"]*")|(?<![\w.-])([A-Za-z_][\w.-]*):(?=[A-Za-z_*])""")


@dataclass(frozen=True, slots=True)
class Filter:
    """A parsed ``<filter>``: subtree elements or an XPath with its namespace bindings."""

    subtree: tuple[Element, ...] | None = None
    xpath: str | None = None


def parse_filter(element: Element | None) -> Filter | None:
    """``<filter type="subtree|xpath" select="...">`` (RFC 6241 6.1, 8.9.1)."""
    if element is None:
        return None
    kind = element.get("type") or element.get(f"{{{BASE_NS}}}type") or "subtree"
    if kind == "subtree":
        return Filter(subtree=tuple(c for c in element if isinstance(c.tag, str)))
    if kind == "xpath":
        select = element.get("select") or element.get(f"{{{BASE_NS}}}select")
        if not select:
            raise netconf_error(
                "missing-attribute",
                "an xpath filter needs select",
                info=(("bad-attribute", "select"), ("bad-element", "filter")),
            )
        return Filter(xpath=xpath_with_modules(select, element.nsmap, _no_lookup))
    raise netconf_error(
        "bad-attribute",
        f"unknown filter type {kind!r}",
        info=(("bad-attribute", "type"), ("bad-element", "filter")),
    )


def _no_lookup(namespace: str) -> str | None:
    del namespace
    return None


def xpath_with_modules(
    xpath: str, nsmap: dict[str | None, str], module_of: Callable[[str], str | None]
) -> str:
    """An XPath whose prefixes are bound by ``nsmap``, with module names as prefixes.

    The module is looked up by namespace when ``module_of`` knows it; otherwise the prefix is
    kept unresolved as ``{namespace}`` for :meth:`Reads.resolve_xpath` to finish.
    """

    def rename(match: re.Match[str]) -> str:
        if match.group(1):
            return match.group(1)
        prefix = match.group(2)
        namespace = nsmap.get(prefix)
        if namespace is None:
            return match.group(0)
        module = module_of(namespace)
        return f"{module}:" if module else f"{{{namespace}}}:"

    return _QNAME.sub(rename, xpath)


class Reader(Protocol):
    """The one core operation reads need (api.ServerCore.read): the seam of their tests."""

    def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
        """Read a subtree of a datastore."""
        ...


class Reads:
    """Reads of one core for the NETCONF operations."""

    def __init__(self, core: Reader, lookup: SchemaLookup) -> None:
        self._core = core
        self._lookup = lookup

    def resolve_xpath(self, xpath: str) -> str:
        """Finish :func:`xpath_with_modules`: ``{namespace}:`` to ``module:``."""

        def module(match: re.Match[str]) -> str:
            found = self._lookup.module_of(match.group(1))
            if found is None:
                raise netconf_error(
                    "invalid-value",
                    f"no module has the namespace {match.group(1)!r}",
                    error_type=ErrorType.APPLICATION,
                )
            return f"{found}:"

        return re.sub(r"\{([^}]*)\}:", module, xpath)

    def read(  # noqa: PLR0913 - the parameters of RFC 6241 8.9 and RFC 8526 3.1
        self,
        datastore: DatastoreName,
        principal: Principal,
        *,
        content: Content,
        filter_: Filter | None = None,
        with_defaults: WithDefaults | None = None,
        with_origin: bool = False,
        depth: int | None = None,
    ) -> list[Element]:
        """The data a read returns, as top-level elements ready for ``<data>``."""
        base = ReadRequest(
            datastore,
            None,
            Encoding.XML,
            content=content,
            with_defaults=with_defaults,
            with_origin=with_origin,
            depth=depth,
        )
        if filter_ is not None and filter_.xpath is not None:
            request = replace(base, xpath_filter=self.resolve_xpath(filter_.xpath))
            return self._fetch(request, principal)
        if filter_ is None or filter_.subtree is None:
            return self._fetch(base, principal)
        if not filter_.subtree:
            return []  # an empty filter selects nothing (RFC 6241 6.4.2)
        groups = self._top_groups(filter_.subtree)
        if groups is None:
            return subtree_filter(self._fetch(base, principal), filter_.subtree)
        data: list[Element] = []
        for top, selectors in groups:
            data += self._filtered(base, principal, top, selectors)
        return data

    def read_raw(
        self,
        datastore: DatastoreName,
        principal: Principal,
        *,
        content: Content,
        filter_: Filter | None = None,
        with_defaults: WithDefaults | None = None,
    ) -> str | None:
        """The reply's data as the core printed it, when the read needs no work on elements:
        no filter, or only selection nodes of top-level containers (each read whole, in the
        filter's order). None when it does (:meth:`read` then)."""
        if with_defaults is WithDefaults.REPORT_ALL_TAGGED:
            return None  # the default attribute is renamed (RFC 6243 6)
        base = ReadRequest(
            datastore, None, Encoding.XML, content=content, with_defaults=with_defaults
        )
        if filter_ is None:
            return self._core.read(base, principal).document or ""
        if filter_.subtree is None or not filter_.subtree:
            return None
        paths = self._whole_containers(filter_.subtree)
        if paths is not None:
            return "".join(
                self._core.read(replace(base, path=path), principal).document or ""
                for path in paths
            )
        return self._selected(base, principal, filter_.subtree)

    def _selected(
        self, base: ReadRequest, principal: Principal, selectors: tuple[Element, ...]
    ) -> str | None:
        """A filter of containment and selection nodes, applied by the core on its tree."""
        if base.datastore is DatastoreName.OPERATIONAL or base.with_defaults is WithDefaults.TRIM:
            return None  # state is built per read; trim hides values a selection would keep
        selection = self._selection(selectors)
        if not selection:
            return None
        return self._core.read(replace(base, selection=selection), principal).document or ""

    def _selection(self, selectors: tuple[Element, ...]) -> tuple[str, ...] | None:
        """The schema paths a filter of containment and selection nodes alone selects
        (RFC 6241 6.2.3, 6.2.4), every containment node a container; None for any other
        filter (content match nodes, attributes, a node without a namespace or unknown)."""
        paths: list[str] = []

        def walk(element: Element, parent: SchemaNode | None) -> bool:
            qname = etree.QName(element)
            module = self._lookup.module_of(qname.namespace or "")
            if module is None or element.attrib or (element.text or "").strip():
                return False
            node = self._lookup.child(parent, module, qname.localname)
            if node is None:
                return False
            children = [c for c in element if isinstance(c.tag, str)]
            if any((c.tail or "").strip() for c in children):
                return False
            if not children:
                if node.schema_path not in paths:
                    paths.append(node.schema_path)
                return parent is not None or node.kind is NodeKind.CONTAINER
            return node.kind is NodeKind.CONTAINER and all(walk(c, node) for c in children)

        if all(walk(selector, None) for selector in selectors):
            return tuple(paths)
        return None

    def _whole_containers(self, selectors: tuple[Element, ...]) -> list[DataPath] | None:
        """The top-level containers selection nodes name (RFC 6241 6.2.4), in order; None
        when a filter node is anything else."""
        paths: list[DataPath] = []
        for selector in selectors:
            qname = etree.QName(selector)
            if len(selector) or selector.attrib or (selector.text or "").strip():
                return None  # not a selection node
            module = self._lookup.module_of(qname.namespace or "")
            node = self._lookup.child(None, module, qname.localname) if module else None
            if module is None or (node is not None and node.kind is not NodeKind.CONTAINER):
                return None
            path = DataPath(f"/{node.qualified_name}") if node is not None else None
            if path is not None and path not in paths:  # no node: it selects nothing
                paths.append(path)
        return paths

    def _top_groups(
        self, selectors: tuple[Element, ...]
    ) -> list[tuple[SchemaNode, list[Element]]] | None:
        """The top-level containers the filter names, each with its filter nodes, in order.

        None when the whole datastore must be read: a filter node without a namespace matches
        every module (RFC 6241 6.2.1), or one names a top-level list or leaf.
        """
        groups: dict[str, tuple[SchemaNode, list[Element]]] = {}
        for selector in selectors:
            qname = etree.QName(selector)
            module = self._lookup.module_of(qname.namespace or "")
            if module is None and qname.namespace is None:
                return None
            node = self._lookup.child(None, module or "", qname.localname) if module else None
            if node is None:
                continue  # selects nothing
            if node.kind is not NodeKind.CONTAINER:
                return None
            groups.setdefault(node.qualified_name, (node, []))[1].append(selector)
        return list(groups.values())

    def _filtered(
        self,
        base: ReadRequest,
        principal: Principal,
        top: SchemaNode,
        selectors: list[Element],
    ) -> list[Element]:
        """One top-level container filtered, read through the narrowest path that is exact.

        A read below the container is not tried where the ancestors it leaves out would differ
        from a whole read's: several filter nodes for one container, ``max-depth``, origin and
        default tags (attributes of the ancestors). Where the narrow read is refused (an access
        rule on the path, a key value the core does not take), the container is read whole.
        """
        whole = replace(base, path=DataPath(f"/{top.qualified_name}"))
        exact = base.depth is None and not base.with_origin
        if (
            len(selectors) == 1
            and exact
            and base.with_defaults is not WithDefaults.REPORT_ALL_TAGGED
        ):
            plan = narrow(selectors[0], top, self._lookup)
            if plan.narrowed:
                try:
                    target = self._fetch(replace(base, path=plan.path), principal)
                except CatsError:
                    pass
                else:
                    return subtree_filter(wrap(target, plan.ancestors), selectors)
        return subtree_filter(self._fetch(whole, principal), selectors)

    def _fetch(self, request: ReadRequest, principal: Principal) -> list[Element]:
        document = self._core.read(request, principal).document
        elements = parse_fragment(document or "")
        if request.with_defaults is WithDefaults.REPORT_ALL_TAGGED:
            for element in elements:
                _retag_defaults(element)
        return elements


def _retag_defaults(top: Element) -> None:
    """libyang tags defaults in the module's namespace; RFC 6243 6 names its own."""
    old = f"{{{WD_NS}}}default"
    for element in top.iter():
        value = element.attrib.pop(old, None) if isinstance(element.tag, str) else None
        if value is not None:
            element.set(f"{{{WD_ATTRIBUTE_NS}}}default", value)
