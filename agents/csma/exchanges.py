"""The state exchanges a C-SMA answered, kept for its operator (agent-selection-mapping 9.1,
9.3, 14): who asked for which instances, reuse keys and reservations, and what was answered.

Pure values: :func:`recorded` appends one :class:`Exchange` (the :class:`Request` and what was
answered) to a bounded :class:`Log`; :func:`log_json` renders it as
``agent-selection/c-sma/exchange`` of ietf-cats-agent-selection. The log is in memory: it
starts empty with the process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from agents.common.clock import date_and_time
from controller.types import Json

KEPT = 1000  # exchanges kept, the most recent


class Operation(StrEnum):
    """The C-SMA's operations of 9.1."""

    QUERY_STATE = "query-state"  # MSG-5/6
    RESERVE_STATE = "reserve-state"  # MSG-11/12
    RELEASE_STATE = "release-state"  # MSG-16


class Status(StrEnum):
    """What the C-SMA answered."""

    ANSWERED = "answered"
    ACCEPTED = "accepted"
    REFUSED = "refused"
    RELEASED = "released"


@dataclass(frozen=True, slots=True)
class Request:
    """What a request named: session, tenant, instances, reuse keys, reservation."""

    session_id: str | None = None
    tenant: str | None = None
    csci_ids: tuple[str, ...] = ()
    reuse_keys: tuple[str, ...] = ()
    reservation_id: str | None = None

    @classmethod
    def of(cls, members: Json) -> Request:
        """The request of an RPC's (schema-checked) RFC 7951 input members."""
        csci = members.get("csci-id", ())
        keys = [e["reuse-key"] for e in members.get("element", ())]
        keys += list(members.get("reuse-key", ()))
        return cls(
            _text(members.get("session-id")),
            _text(members.get("tenant")),
            tuple(str(c) for c in ([csci] if isinstance(csci, str) else csci)),
            tuple(str(k) for k in keys),
            _text(members.get("reservation-id")),
        )


@dataclass(frozen=True, slots=True)
class Exchange:
    """One answered request."""

    operation: Operation
    request: Request
    at: float  # Unix seconds
    user: str
    status: Status
    released: int | None = None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class Log:
    """The most recent exchanges, oldest first, and the index the next one gets."""

    exchanges: tuple[tuple[int, Exchange], ...] = ()
    next_index: int = 1


def recorded(log: Log, exchange: Exchange, kept: int = KEPT) -> Log:
    """The log with ``exchange`` appended, the oldest dropped beyond ``kept``."""
    entries = (*log.exchanges, (log.next_index, exchange))
    return Log(entries[-kept:] if kept > 0 else (), log.next_index + 1)


def _exchange_json(index: int, exchange: Exchange) -> Json:
    doc: Json = {
        "index": str(index),
        "operation": exchange.operation.value,
        "at": date_and_time(exchange.at),
        "user": exchange.user,
        "status": exchange.status.value,
    }
    asked = exchange.request
    pairs: Iterable[tuple[str, object]] = (
        ("session-id", asked.session_id),
        ("tenant", asked.tenant),
        ("csci-id", list(dict.fromkeys(asked.csci_ids)) or None),
        ("reuse-key", list(dict.fromkeys(asked.reuse_keys)) or None),
        ("reservation-id", asked.reservation_id),
        ("released", exchange.released),
    )
    doc.update((name, value) for name, value in pairs if value is not None)
    return doc


def log_json(log: Log) -> Json:
    """``agent-selection/c-sma`` (members of the agent-selection container)."""
    if not log.exchanges:
        return {}
    return {"exchange": [_exchange_json(i, e) for i, e in log.exchanges]}
