"""CS-IDs and CSCI-IDs between the tables (text) and RFC 7951 JSON (a number when numeric).

``cats-t:cs-id`` and ``cats-t:csci-id`` are unions with a ``uint32`` member, so RFC 7951 6.1
writes the identifier 7 as the JSON number ``7``, never as ``"7"`` (which no member of the
union accepts). The C-PS keys its tables by text, so inputs are turned into text when they
arrive and documents into numbers where the value is numeric when they leave.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: Leaves typed cats-t:cs-id or cats-t:csci-id in ietf-cats-service-metrics documents.
ID_LEAVES = frozenset({"cs-id", "csci-id", "previous-csci-id", "new-csci-id"})
#: The key leaves of report entries and paths (forwarder-ids are never numeric, but a path's
#: keys are checked with the same pass).
_ITEM_KEYS = ("cs-id", "csci-id", "ingress", "egress")
_UINT32_MAX = 2**32 - 1


def _number(value: str) -> int | str:
    if value.isascii() and value.isdigit() and int(value) <= _UINT32_MAX:
        return int(value)
    return value


def as_text(document: Any) -> Any:
    """``document`` with every numeric identifier turned into its text."""
    if isinstance(document, dict):
        return {
            name: str(value)
            if name in ID_LEAVES and isinstance(value, int) and not isinstance(value, bool)
            else as_text(value)
            for name, value in document.items()
        }
    if isinstance(document, list):
        return [as_text(item) for item in document]
    return document


def as_json(document: Any) -> Any:
    """``document`` with every identifier that is a uint32 written as a JSON number.

    Every reply and notification of the C-PS passes here: scalars are handled in the loop,
    only objects and arrays recurse.
    """
    if isinstance(document, list):
        return [as_json(item) if isinstance(item, dict | list) else item for item in document]
    if not isinstance(document, dict):
        return document
    found: dict[str, Any] = {}
    for name, value in document.items():
        if isinstance(value, dict | list):
            found[name] = as_json(value)
        elif name in ID_LEAVES and isinstance(value, str):
            found[name] = _number(value)
        else:
            found[name] = value
    return found


def items_as_text(items: Sequence[Any]) -> Sequence[Any]:
    """Report entries or paths with numeric key values (cs-id 7, csci-id 42) as text.

    The report hot path: one flat check over the keys, and copies only when one is numeric.
    """
    if all(isinstance(item.get(k, ""), str) for item in items for k in _ITEM_KEYS):
        return items
    return [{**item, **{k: str(item[k]) for k in _ITEM_KEYS if k in item}} for item in items]
