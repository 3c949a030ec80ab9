"""Reads for get, get-config and get-data: the core's XML, filtered (RFC 6241 6, 8.9; RFC 6243).

A subtree filter is applied to the core's document by :mod:`controller.netconf.subtree`; a
top-level container the filter names is read alone, so a filtered read does not render the
whole datastore. An XPath filter (RFC 6241 8.9) is handed to the core with its XML prefixes
rewritten to module names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from controller.datastore.api import (
    Content,
    DatastoreName,
    Principal,
    ReadRequest,
    ServerCore,
    WithDefaults,
)
from controller.errors import ErrorType
from controller.model import Encoding
from controller.model.paths import NodeKind
from controller.netconf.edits import SchemaLookup
from controller.netconf.errors import netconf_error
from controller.netconf.messages import BASE_NS, parse_fragment
from controller.netconf.subtree import subtree_filter

Element = Any  # lxml.etree._Element (lxml has no type information)
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


class Reads:
    """Reads of one core for the NETCONF operations."""

    def __init__(self, core: ServerCore, lookup: SchemaLookup) -> None:
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
            request = _replace(base, xpath_filter=self.resolve_xpath(filter_.xpath))
            return self._fetch(request, principal)
        if filter_ is None or filter_.subtree is None:
            return self._fetch(base, principal)
        if not filter_.subtree:
            return []  # an empty filter selects nothing (RFC 6241 6.4.2)
        data: list[Element] = []
        for path in self._top_paths(filter_.subtree):
            data += self._fetch(_replace(base, path=path), principal)
        return subtree_filter(data, filter_.subtree)

    def _top_paths(self, selectors: tuple[Element, ...]) -> list[str | None]:
        """The top-level containers the filter names (None: read everything)."""
        paths: list[str] = []
        for selector in selectors:
            qname = etree.QName(selector)
            module = self._lookup.module_of(qname.namespace or "")
            if module is None and qname.namespace is None:
                return [None]
            node = self._lookup.child(None, module or "", qname.localname) if module else None
            if node is None:
                continue  # selects nothing
            if node.kind is not NodeKind.CONTAINER:
                return [None]
            path = f"/{node.qualified_name}"
            if path not in paths:
                paths.append(path)
        return list(paths)

    def _fetch(self, request: ReadRequest, principal: Principal) -> list[Element]:
        document = self._core.read(request, principal).document
        elements = parse_fragment(document or "")
        if request.with_defaults is WithDefaults.REPORT_ALL_TAGGED:
            for element in elements:
                _retag_defaults(element)
        return elements


def _replace(request: ReadRequest, **changes: object) -> ReadRequest:
    from dataclasses import replace  # noqa: PLC0415

    return replace(request, **changes)  # type: ignore[arg-type]


def _retag_defaults(top: Element) -> None:
    """libyang tags defaults in the module's namespace; RFC 6243 6 names its own."""
    old = f"{{{WD_NS}}}default"
    for element in top.iter():
        value = element.attrib.pop(old, None) if isinstance(element.tag, str) else None
        if value is not None:
            element.set(f"{{{WD_ATTRIBUTE_NS}}}default", value)
