"""A configuration file's native values as RFC 7951 JSON of the YANG module that models it.

The agents' configuration files are TOML (or JSON) whose tables and keys are the containers,
lists and leaves of the agent's module (``cats-csma-config`` and its siblings). TOML has no
decimal64 or 64-bit integer type of its own, and RFC 7951 6.1 encodes those as JSON strings,
so a file's ``interval-ms = 250`` or ``capacity = 8589934592`` would be refused by a strict
RFC 7951 parser. :func:`to_rfc7951` walks the document beside the compiled schema and writes
each such number as the string RFC 7951 wants, and a single value given for a leaf-list as a
one-element array (TOML's ``role = "ingress"``). Nothing else is changed: unknown keys, wrong
types and out-of-range values are left for libyang to refuse with the data path and reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import libyang

from controller.model.schema import Schema
from controller.types import Json

_STRING_NUMBERS = frozenset({libyang.Type.DEC64, libyang.Type.INT64, libyang.Type.UINT64})


def _bases(kind: libyang.Type) -> Iterator[int]:
    """The base types a value of ``kind`` may have (a union's members, a leafref's target)."""
    base = kind.base()
    if base == libyang.Type.UNION:
        for member in kind.union_types():
            yield from _bases(member)
    elif base == libyang.Type.LEAFREF:
        target = kind.leafref_type()
        if target is not None:
            yield from _bases(target)
    else:
        yield base


def _number(value: Any, kind: libyang.Type) -> Any:
    """A TOML number as RFC 7951 wants it for ``kind`` (RFC 7951 6.1)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return value
    bases = set(_bases(kind))
    if bases & _STRING_NUMBERS and not bases - _STRING_NUMBERS - {libyang.Type.STRING}:
        return str(value)
    if isinstance(value, Decimal):  # tomllib's parse_float: a JSON number again
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _children(node: Any) -> dict[str, Any]:
    return {child.name(): child for child in node.children()}


def _convert(value: Any, node: Any) -> Any:
    if isinstance(node, libyang.SLeaf):
        return _number(value, node.type())
    if isinstance(node, libyang.SLeafList):
        items = value if isinstance(value, list) else [value]
        return [_number(item, node.type()) for item in items]
    if isinstance(node, libyang.SList) and isinstance(value, list):
        children = _children(node)
        return [_members(item, children) if isinstance(item, Mapping) else item for item in value]
    if isinstance(value, Mapping):
        return _members(value, _children(node))
    return value


def _members(table: Mapping[str, Any], children: Mapping[str, Any]) -> Json:
    return {
        name: _convert(value, children[name]) if name in children else value
        for name, value in table.items()
    }


def to_rfc7951(schema: Schema, top: str, document: Mapping[str, Any]) -> Json:
    """``{top: document}`` with the numbers and leaf-lists written as RFC 7951 has them.

    ``top`` is the module-qualified top-level container (``cats-csma-config:csma``).
    """
    node = next(schema.context.find_path(f"/{top}"))
    return {top: _convert(document, node)}
