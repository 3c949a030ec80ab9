"""The C-SMA's RPC inputs read into requests and its answers written as outputs.

Pure: validated RFC 7951 members in (the server core has checked them against the schema),
values out, and back (agent-selection-mapping 9.1 MSG-5/6, MSG-11/12, MSG-16).
"""

from __future__ import annotations

from agents.common.clock import date_and_time, epoch
from agents.csma.reservations import Answer, ReleaseRequest, ReserveRequest, Wanted
from agents.csma.stateview import MODULE, StateQuery
from controller.types import CsciId, Json, ReservationId, ReuseKey, SchemaPath, SessionId, TenantId

QUERY_STATE = SchemaPath(f"/{MODULE}:query-state")
RESERVE_STATE = SchemaPath(f"/{MODULE}:reserve-state")
RELEASE_STATE = SchemaPath(f"/{MODULE}:release-state")


def _identity(value: object) -> str | None:
    return None if value is None else str(value).rpartition(":")[2]


def state_query(members: Json) -> StateQuery:
    """query-state input (MSG-5)."""
    return StateQuery(
        TenantId(str(members["tenant"])),
        tuple(ReuseKey(str(k)) for k in members.get("reuse-key", ())),
        frozenset(CsciId(str(c)) for c in members.get("csci-id", ())),
    )


def reserve_request(members: Json) -> ReserveRequest:
    """reserve-state input (MSG-11)."""
    wanted = tuple(
        Wanted(
            ReuseKey(str(e["reuse-key"])),
            _identity(e.get("element-class")),
            int(e["element-size"]) if "element-size" in e else None,
            _identity(e.get("residency")),
        )
        for e in members.get("element", ())
    )
    handoff = members.get("handoff-id")
    return ReserveRequest(
        ReservationId(str(members["reservation-id"])),
        SessionId(str(members["session-id"])),
        TenantId(str(members["tenant"])),
        CsciId(str(members["csci-id"])),
        wanted,
        int(members["size"]),
        epoch(str(members["needed-by"])),
        None if handoff is None else str(handoff),
    )


def answer_json(answer: Answer) -> Json:
    """reserve-state output (MSG-12)."""
    doc: Json = {
        "reservation-id": answer.reservation_id,
        "status": "accepted" if answer.accepted else "refused",
    }
    if answer.accepted:
        doc["valid-from"] = date_and_time(answer.valid_from or 0.0)
        doc["valid-until"] = date_and_time(answer.valid_until or 0.0)
    else:
        doc["refusal-reason"] = f"{MODULE}:{answer.refusal}"
    if answer.detail:
        doc["detail"] = answer.detail
    return doc


def release_request(members: Json) -> ReleaseRequest:
    """release-state input (MSG-16)."""
    reservation = members.get("reservation-id")
    return ReleaseRequest(
        SessionId(str(members["session-id"])),
        TenantId(str(members["tenant"])),
        None if reservation is None else ReservationId(str(reservation)),
        frozenset(CsciId(str(c)) for c in members.get("csci-id", ())),
        frozenset(ReuseKey(str(k)) for k in members.get("reuse-key", ())),
    )
