"""Bounds on a document's shape, checked before any expensive parse: XML attributes per
element, elements and depth; JSON member names, values and depth.

libxml2 looks for a duplicate attribute among all earlier ones of its element, so an element
with 200k attributes takes minutes to parse; and a document of tiny elements costs far more
memory and time than its size suggests. Both are found here in linear time at C speed before
the parser runs: the elements by counting ``<`` (every start tag has one, and no ``<`` may
appear unescaped in text or attribute values, XML 1.0 2.4 and 3.1), the attributes by one
regular-expression search for a start tag with too many. Depth is checked on the parsed tree
with one XPath, cheap once the elements are bounded.

JSON: a member name twice in one object is refused (RFC 8259 4 leaves its meaning to the
implementation, RFC 7951 relies on unique names), nesting past the bound is refused instead of
exhausting the parser's recursion, and the values are bounded by counting separators.
"""

from __future__ import annotations

import functools
import json
import re
from array import array
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from lxml import etree


@dataclass(frozen=True, slots=True)
class DocumentLimits:
    """The bounds on one message or body (``--max-xml-attributes`` and friends)."""

    max_attributes: int = 128  # per XML element
    max_elements: int = 1_500_000  # XML elements, or JSON values
    max_depth: int = 128  # nested elements, or nested JSON objects and arrays


class LimitError(ValueError):
    """A document is past a bound; the message says which. ``too_big`` for a bound on its
    size (attributes, elements): RFC 6241 and RFC 8040 ``too-big``; else (depth, a duplicate
    name) the document is malformed."""

    def __init__(self, message: str, *, too_big: bool = True) -> None:
        super().__init__(message)
        self.too_big = too_big


@functools.cache
def _crowded(attributes: int) -> re.Pattern[bytes]:
    """A start tag with more than ``attributes`` attributes (namespace declarations count)."""
    attribute = rb"""\s+[^\s=<>/"']+\s*=\s*(?:"[^"<]*"|'[^'<]*')"""
    return re.compile(rb"<[^\s<>/!?][^\s<>/]*(?:" + attribute + rb"){%d}" % (attributes + 1))


def check_xml_markup(data: bytes, limits: DocumentLimits) -> None:
    """Refuse an XML document past the element or attribute bound, without parsing it."""
    elements = data.count(b"<") - data.count(b"</")
    if elements > limits.max_elements:
        raise LimitError(f"more than {limits.max_elements} elements")
    if _crowded(limits.max_attributes).search(data):
        raise LimitError(f"an element with more than {limits.max_attributes} attributes")


def check_xml_depth(root: Any, limits: DocumentLimits) -> None:
    """Refuse a parsed XML document nested deeper than the bound."""
    path = "/*" * (limits.max_depth + 1)
    if root.getroottree().xpath(f"boolean({path})"):
        raise LimitError(f"elements nested more than {limits.max_depth} deep", too_big=False)


_ESCAPES = re.compile(rb"\\.", re.DOTALL)  # inside strings only, in well-formed JSON
_STRUCTURE = bytes(code for code in range(256) if code not in b'[]{}"')
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 and -1 as signed bytes


def _depth(text: str, limit: int) -> bool:
    """Whether JSON text nests objects and arrays deeper than ``limit``, at C speed: escapes
    dropped, only brackets and quotes kept, what lies between quotes dropped, the brackets
    as +1 and -1 and their running sum."""
    kept = _ESCAPES.sub(b"", text.encode(errors="surrogatepass")).translate(None, _STRUCTURE)
    outside = b"".join(kept.split(b'"')[0::2])
    if len(outside) <= limit:
        return False
    return max(accumulate(array("b", outside.translate(_SIGNS))), default=0) > limit


def unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook`` refusing a member name given twice."""
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise LimitError(f"the member name {name!r} appears twice in one object", too_big=False)
        found[name] = value
    return found


def check_json_shape(text: str, limits: DocumentLimits) -> None:
    """Refuse JSON text past the value or depth bound, without parsing it."""
    if text.count(",") + text.count("{") + text.count("[") >= limits.max_elements:
        raise LimitError(f"more than {limits.max_elements} values")
    if _depth(text, limits.max_depth):
        raise LimitError(
            f"objects and arrays nested more than {limits.max_depth} deep", too_big=False
        )


def load_json(text: str, limits: DocumentLimits) -> Any:
    """Parse JSON text within the bounds, refusing duplicate member names.

    Raises:
        LimitError: past a bound, or a duplicate member name.
        ValueError: not JSON.
    """
    check_json_shape(text, limits)
    try:
        return json.loads(text, object_pairs_hook=unique_members)
    except RecursionError:  # only below the bound when the bound is set very high
        raise LimitError("objects and arrays nested too deep", too_big=False) from None


_CHECKER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True, remove_comments=True
)


def check_xml(data: bytes, limits: DocumentLimits) -> None:
    """Refuse an XML document past a bound, before a parser that trusts it (libyang's, whose
    tree building recurses per level) sees it: markup first, then, when it has more elements
    than the depth bound (so that it could be too deep), depth on a parse."""
    check_xml_markup(data, limits)
    if data.count(b"<") <= limits.max_depth:
        return
    try:
        root = etree.fromstring(data, _CHECKER)
    except etree.XMLSyntaxError as exc:
        if "depth" in str(exc).lower():
            raise LimitError(
                f"elements nested more than {limits.max_depth} deep", too_big=False
            ) from None
        return  # not well-formed: the document's own parser says so
    if root is not None:
        check_xml_depth(root, limits)


def parse_bounded_xml(data: bytes, parser: etree.XMLParser, limits: DocumentLimits) -> Any:
    """Parse an XML document within the bounds (:func:`check_xml_markup`, then the parser,
    then :func:`check_xml_depth`).

    Raises:
        LimitError: past a bound.
        etree.XMLSyntaxError: not well-formed.
    """
    check_xml_markup(data, limits)
    root = etree.fromstring(data, parser)
    if root is not None:
        check_xml_depth(root, limits)
    return root
