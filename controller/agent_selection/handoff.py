"""P9, the handoff state machine: reserve, transfer or rebuild, then commit or abort (8.1, 9.2).

Every transition is a pure function of the record and the message: a repeated or reordered
message never moves a record backwards, a terminal record (committed, aborted) never changes
again, and an expired reservation is not a reservation (M26, M43). The C-PS commits only
when the target reports the working set usable within the divergence the descriptor accepts;
otherwise the handoff aborts with its reason and the session stays at the source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from controller.agent_selection.values import ident, instant, number
from controller.observability.metrics import HANDOFFS
from controller.selection.units import Timestamp
from controller.types import CommitmentId, CsciId, ReuseKey, SessionId


class HandoffState(StrEnum):
    """handoff-state, with ``requested`` before the target has answered (not rendered)."""

    REQUESTED = "requested"
    RESERVED = "reserved"
    TRANSFERRING = "transferring"
    COMMITTED = "committed"
    ABORTED = "aborted"


TERMINAL = frozenset({HandoffState.COMMITTED, HandoffState.ABORTED})
_ORDER = tuple(HandoffState)


class AbortReason(StrEnum):
    """handoff-abort-reason identities."""

    RESERVATION_REFUSED = "reservation-refused"
    RESERVATION_EXPIRED = "reservation-expired"
    TRANSFER_FAILED = "transfer-failed"
    DIVERGENCE_EXCEEDED = "divergence-exceeded"
    CONSTRAINT_AT_RISK = "constraint-at-risk"
    SUPERSEDED = "superseded"
    HANDOFF_TIMEOUT = "handoff-timeout"


@dataclass(frozen=True, slots=True)
class Notice:
    """A state-transfer-notice (MSG-13)."""

    reporter: str  # source | target
    status: str  # completed | failed | aborted
    usable: frozenset[ReuseKey] = frozenset()
    unusable: frozenset[ReuseKey] = frozenset()
    divergence: Mapping[ReuseKey, float] = field(default_factory=dict)
    detail: str = ""

    @classmethod
    def of(cls, members: Mapping[str, Any]) -> Notice:
        """The notice of the RPC's members."""
        divergence = {
            ReuseKey(str(d["reuse-key"])): number(d.get("missing-fraction")) or 0.0
            for d in members.get("divergence", ())
        }
        return cls(
            str(members["reporter"]),
            str(members["status"]),
            frozenset(ReuseKey(str(k)) for k in members.get("usable-key", ())),
            frozenset(ReuseKey(str(k)) for k in members.get("unusable-key", ())),
            divergence,
            str(members.get("detail", "")),
        )


@dataclass(frozen=True, slots=True)
class Handoff:
    """One handoff record (handoff-record): what moves, where, and how far it got.

    ``accepted`` maps each moved key to the missing fraction its element accepts (None: it
    must arrive whole). ``early`` keeps a target's notice that arrived before the reservation
    reply, applied once the reservation is known (reordering, M43).
    """

    handoff_id: str
    session_id: SessionId
    source: CsciId
    target: CsciId
    record_id: int
    started_at: Timestamp
    deadline: Timestamp
    moved: tuple[ReuseKey, ...] = ()
    size: int = 0
    accepted: Mapping[ReuseKey, float | None] = field(default_factory=dict)
    state: HandoffState = HandoffState.REQUESTED
    reservation_id: str = ""
    valid_from: Timestamp | None = None
    valid_until: Timestamp | None = None
    transitions: tuple[tuple[HandoffState, Timestamp], ...] = ()
    usable: frozenset[ReuseKey] = frozenset()
    unusable: frozenset[ReuseKey] = frozenset()
    abort_reason: AbortReason | None = None
    abort_detail: str = ""
    commitment_id: CommitmentId | None = None
    early: Notice | None = None
    change_cost: float | None = None

    @property
    def terminal(self) -> bool:
        """Committed or aborted: nothing changes it any more."""
        return self.state in TERMINAL

    @property
    def holds_reservation(self) -> bool:
        """Whether the target may hold a reservation for it (to release on abort)."""
        return self.state is not HandoffState.COMMITTED and bool(self.reservation_id)


def _to(handoff: Handoff, state: HandoffState, now: Timestamp, **changes: Any) -> Handoff:
    HANDOFFS.labels(state.value).inc()
    return replace(
        handoff, state=state, transitions=(*handoff.transitions, (state, now)), **changes
    )


def aborted(handoff: Handoff, reason: AbortReason, detail: str, now: Timestamp) -> Handoff:
    """The handoff abandoned with its reason; the session stays at the source."""
    if handoff.terminal:
        return handoff
    return _to(handoff, HandoffState.ABORTED, now, abort_reason=reason, abort_detail=detail)


def expired(handoff: Handoff, now: Timestamp) -> Handoff:
    """Abort a handoff whose reservation or handoff timeout ran out (M43: an expired
    reservation is not a reservation)."""
    if handoff.terminal:
        return handoff
    if handoff.valid_until is not None and now > handoff.valid_until:
        return aborted(handoff, AbortReason.RESERVATION_EXPIRED, "reservation expired", now)
    if now > handoff.deadline:
        return aborted(handoff, AbortReason.HANDOFF_TIMEOUT, "handoff timeout", now)
    return handoff


def reserved(handoff: Handoff, reply: Mapping[str, Any], now: Timestamp) -> Handoff:
    """Apply the target's reserve-state reply (MSG-12); a repeated reply changes nothing."""
    if handoff.state is not HandoffState.REQUESTED:
        return handoff
    if str(reply.get("status")) != "accepted":
        reason = ident(reply.get("refusal-reason", "refused"))
        detail = str(reply.get("detail", ""))
        return aborted(
            handoff, AbortReason.RESERVATION_REFUSED, f"{reason}: {detail}".rstrip(": "), now
        )
    until = instant(reply.get("valid-until"))
    reservation = str(reply.get("reservation-id", handoff.reservation_id))
    accepted = _to(
        handoff,
        HandoffState.RESERVED,
        now,
        reservation_id=reservation,
        valid_from=instant(reply.get("valid-from")),
        valid_until=until,
    )
    checked = expired(accepted, now)
    early = checked.early
    if early is None or checked.terminal:
        return checked
    return noticed(replace(checked, early=None), early, now)


def unreachable(handoff: Handoff, detail: str, now: Timestamp) -> Handoff:
    """The target's C-SMA could not be asked: no reservation, abort."""
    return aborted(handoff, AbortReason.RESERVATION_REFUSED, f"target unreachable: {detail}", now)


def _usable(handoff: Handoff, notice: Notice) -> tuple[bool, AbortReason, str]:
    """Whether every moved key is usable at the target within its accepted divergence."""
    for key in handoff.moved:
        missing = notice.divergence.get(key)
        limit = handoff.accepted.get(key)
        if key in notice.unusable and missing is None:
            return False, AbortReason.TRANSFER_FAILED, f"{key} not usable at the target"
        if missing is not None and (limit is None or missing > limit):
            bound = "none" if limit is None else f"{limit:.4f}"
            return False, AbortReason.DIVERGENCE_EXCEEDED, f"{key} missing {missing:.4f} > {bound}"
    return True, AbortReason.TRANSFER_FAILED, ""


def _completed(handoff: Handoff, notice: Notice, now: Timestamp) -> Handoff:
    """A completion notice on a reserved or transferring handoff."""
    if notice.reporter == "source":
        if handoff.state is HandoffState.RESERVED:
            return _to(handoff, HandoffState.TRANSFERRING, now)
        return handoff
    ok, reason, detail = _usable(handoff, notice)
    if not ok:
        return aborted(handoff, reason, detail, now)
    if handoff.state is HandoffState.RESERVED:
        handoff = _to(handoff, HandoffState.TRANSFERRING, now)
    usable = notice.usable or frozenset(handoff.moved)
    return _to(handoff, HandoffState.COMMITTED, now, usable=usable, unusable=notice.unusable)


def stray(handoff: Handoff, notice: Notice) -> bool:
    """Whether a notice comes for a handoff already settled otherwise: any notice of an
    aborted handoff, a failure of a committed one. A completion of a committed handoff is a
    repetition (M43), not a stray."""
    if handoff.state is HandoffState.ABORTED:
        return True
    return handoff.state is HandoffState.COMMITTED and notice.status != "completed"


def noticed(handoff: Handoff, notice: Notice, now: Timestamp) -> Handoff:
    """Apply a state-transfer-notice (MSG-13): a failure aborts; the source's completion
    moves to transferring; the target's completion commits when the working set is usable
    and the reservation still holds. Reordered notices never move the record backwards; a
    target's completion before the reservation reply waits for it."""
    handoff = expired(handoff, now)
    if handoff.terminal:
        return handoff
    if notice.status != "completed":
        detail = f"{notice.reporter} reports {notice.status}: {notice.detail}".rstrip(": ")
        return aborted(handoff, AbortReason.TRANSFER_FAILED, detail, now)
    if handoff.state is HandoffState.REQUESTED:
        return replace(handoff, early=notice) if notice.reporter == "target" else handoff
    return _completed(handoff, notice, now)
