"""Query parameters (RFC 8040 4.8): parsed, checked against the method, and typed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar
from urllib.parse import unquote_plus

from controller.datastore.api import Content, InsertWhere, WithDefaults
from controller.restconf.errors import protocol_error

DEPTH_MAX = 65535

#: The query parameters each kind of request takes (RFC 8040 4.8, Table in 4.8).
READ_PARAMS = frozenset({"content", "depth", "fields", "with-defaults"})
WRITE_PARAMS = frozenset({"insert", "point"})
STREAM_PARAMS = frozenset({"filter", "start-time", "stop-time"})
NO_PARAMS: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class QueryParams:
    """The typed query parameters of one request."""

    content: Content = Content.ALL
    depth: int | None = None
    fields: str | None = None
    with_defaults: WithDefaults | None = None
    insert: InsertWhere | None = None
    point: str | None = None  # a percent-encoded api-path, resolved by the caller
    xpath_filter: str | None = None
    start_time: datetime | None = None
    stop_time: datetime | None = None


def _bad(message: str) -> Exception:
    return protocol_error(400, "invalid-value", message)


def split_query(query: str) -> dict[str, str]:
    """Split a raw query string; a repeated parameter is an error (RFC 8040 4.8).

    ``point`` is a resource path: decoded once here like any value, its key values are decoded
    again when it is resolved, so a key holding ``/`` or ``,`` is encoded twice (``%252F``).
    """
    found: dict[str, str] = {}
    for part in query.split("&"):
        if not part:
            continue
        name, _, value = part.partition("=")
        name = unquote_plus(name)
        if name in found:
            raise _bad(f"query parameter {name!r} given more than once")
        found[name] = unquote_plus(value)
    return found


E = TypeVar("E", Content, WithDefaults, InsertWhere)


def _enum(kind: type[E], name: str, value: str) -> E:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(member.value for member in kind)
        raise _bad(f"{name} must be one of {choices}, not {value!r}") from None


def _depth(value: str) -> int | None:
    if value == "unbounded":
        return None
    if not value.isdigit() or not 1 <= int(value) <= DEPTH_MAX:
        raise _bad(f"depth must be 'unbounded' or 1..{DEPTH_MAX}, not {value!r}")
    return int(value)


def _time(name: str, value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise _bad(f"{name} must be a date-and-time, not {value!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def parse_query(query: str, allowed: frozenset[str]) -> QueryParams:
    """Parse the raw query string of a request that takes the ``allowed`` parameters."""
    raw = split_query(query)
    for name in raw:
        if name not in allowed:
            raise _bad(f"query parameter {name!r} is not supported here")
    insert = _enum(InsertWhere, "insert", raw["insert"]) if "insert" in raw else None
    point = raw.get("point")
    if (insert in (InsertWhere.BEFORE, InsertWhere.AFTER)) != (point is not None):
        raise _bad("point is given exactly when insert is 'before' or 'after'")
    start = _time("start-time", raw["start-time"]) if "start-time" in raw else None
    stop = _time("stop-time", raw["stop-time"]) if "stop-time" in raw else None
    if stop is not None and (start is None or stop < start):
        raise _bad("stop-time needs a start-time no later than it")
    if raw.get("fields") == "":
        raise _bad("fields must select at least one node")
    return QueryParams(
        content=_enum(Content, "content", raw["content"]) if "content" in raw else Content.ALL,
        depth=_depth(raw["depth"]) if "depth" in raw else None,
        fields=raw.get("fields"),
        with_defaults=(
            _enum(WithDefaults, "with-defaults", raw["with-defaults"])
            if "with-defaults" in raw
            else None
        ),
        insert=insert,
        point=point,
        xpath_filter=raw.get("filter"),
        start_time=start,
        stop_time=stop,
    )
