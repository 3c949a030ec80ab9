"""Subtree filtering (RFC 6241 6) as a pure function over lxml trees.

A filter element matches a data element of the same local name and namespace (a filter
element without a namespace matches every namespace, 6.2.1) whose attributes include the
filter element's (6.2.2). Among a filter element's children, content match nodes (leaves with
text, 6.2.5) must all match for the parent to be selected; selection nodes (empty leaves, 6.2.4)
select a whole subtree; containment nodes (with child elements, 6.2.3) select what their own
children select. A parent whose filter children are all content match nodes is returned whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy

from lxml import etree

from controller.types import Element

_WHOLE = True
_PART = False


def _elements(node: Element) -> list[Element]:
    return [child for child in node if isinstance(child.tag, str)]


def _text(node: Element) -> str:
    return (node.text or "").strip()


def _is_content_match(node: Element) -> bool:
    return not _elements(node) and bool(_text(node))


def _matches(data: Element, selector: Element) -> bool:
    """Name, namespace (6.2.1) and attribute (6.2.2) match of one data element."""
    wanted = etree.QName(selector)
    found = etree.QName(data)
    if wanted.localname != found.localname:
        return False
    if wanted.namespace is not None and wanted.namespace != found.namespace:
        return False
    return all(data.get(key) == value for key, value in selector.attrib.items())


def _merge(into: dict[Element, bool], marks: dict[Element, bool]) -> None:
    for node, whole in marks.items():
        into[node] = into.get(node, _PART) or whole


def _select(data: Element, selectors: Sequence[Element]) -> dict[Element, bool] | None:
    """What ``selectors`` (the children of a filter node) select under ``data``.

    None when ``data`` is not selected: a content match node fails (6.2.5), or there are no
    content match nodes and no selection or containment node selects anything.
    """
    if not selectors:
        return {data: _WHOLE}
    children = _elements(data)
    marks: dict[Element, bool] = {}
    content = [s for s in selectors if _is_content_match(s)]
    for selector in content:
        hits = [c for c in children if _matches(c, selector) and _text(c) == _text(selector)]
        if not hits:
            return None
        _merge(marks, dict.fromkeys(hits, _WHOLE))
    others = [s for s in selectors if not _is_content_match(s)]
    if not others:
        return {data: _WHOLE}
    selected = False
    for selector in others:
        for child in children:
            if _matches(child, selector):
                found = _select(child, _elements(selector))
                if found is not None:
                    selected = True
                    _merge(marks, found)
                    marks.setdefault(child, _PART)
    if not selected and not content:
        return None
    marks.setdefault(data, _PART)
    return marks


def _build(data: Element, keep: dict[Element, bool]) -> Element:
    if keep[data] is _WHOLE:
        return deepcopy(data)
    copy = etree.Element(data.tag, attrib=dict(data.attrib), nsmap=data.nsmap)
    for child in _elements(data):
        if child in keep:
            copy.append(_build(child, keep))
    return copy


def subtree_filter(data: Sequence[Element], filter_nodes: Sequence[Element]) -> list[Element]:
    """The top-level data elements, filtered by the children of a ``<filter>`` element.

    An empty filter selects nothing (6.4.2); the result is made of copies, in document order.
    """
    keep: dict[Element, bool] = {}
    for top in data:
        for selector in filter_nodes:
            if _matches(top, selector):
                found = _select(top, _elements(selector))
                if found is not None:
                    _merge(keep, found)
    return [_build(top, keep) for top in data if top in keep]
