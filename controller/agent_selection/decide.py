"""P8 and the start of P9 on one session: what an evaluation changes, as a new Session value.

:func:`settle` records the decision (M39), keeps or extends the commitment in force, makes
the first commitment, or starts a handoff towards the selected candidate (the commitment stays
at the source until the handoff commits, M26). A first placement whose valuation assumed a
transfer of state from another candidate is acted on as one too: reserve at the target,
transfer from the holder, and commit only when the target reports the state usable (6.7,
P9): a valuation that assumed a transfer is never committed without it. It returns the
notifications to publish and the reservations and releases to send, so the caller does the
I/O outside its lock.
:func:`committed` and :func:`settled_handoff` finish a handoff. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from controller.agent_selection import compaction, ids, render
from controller.agent_selection.handoff import AbortReason, Handoff, HandoffState, aborted
from controller.agent_selection.sessions import CommitmentRecord, Kept, Session
from controller.agent_selection.values import date_and_time, qualified
from controller.selection.mapping import (
    Commitment,
    Descriptor,
    Evaluation,
    FailureReport,
    Invalidation,
    Policy,
    charge_change,
)
from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    DecisionPoint,
    Element,
    FallbackRung,
    Outcome,
    Presence,
    Trigger,
)
from controller.selection.units import Timestamp
from controller.southbound import Target
from controller.types import CsciId, Json, ReuseKey


@dataclass(frozen=True, slots=True)
class Settings:
    """What settling needs besides the session and the evaluation."""

    now: Timestamp
    lifetime: float
    handoff_timeout: float
    max_records: int | None = None
    max_reservation_rate: int | None = None
    targets: Mapping[CsciId, Target | None] = field(default_factory=dict)
    intern: compaction.Interner | None = None  # the C-PS's, shared by every session's records
    last: compaction.Compacted | None = None  # the session's last compacted results, if kept


@dataclass
class Effects:
    """What to do once the lock is released: publish, reserve, release."""

    notes: list[Json] = field(default_factory=list)
    reserve: list[tuple[Handoff, Target, Json]] = field(default_factory=list)
    release: list[tuple[Target, Json]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Settled:
    """The reply's view of a settled decision."""

    record_id: int
    held: CommitmentRecord | None
    handoff_id: str | None


def note(name: str, members: Json) -> Json:
    """A notification document of ietf-cats-agent-selection."""
    return {qualified(name): members}


def recorded(session: Session, record_id: int, ev: Evaluation) -> Json:
    """decision-recorded."""
    members: Json = {
        "session-id": session.session_id,
        "record-id": str(record_id),
        "decision-point": qualified(ev.decision_point.value),
        "excluded-count": len({e.csci_id for e in ev.exclusions}),
    }
    for name, value in (("turn-id", ev.turn_id), ("step-id", ev.step_id)):
        if value is not None:
            members[name] = value
    if ev.trigger is not None:
        members["trigger"] = qualified(ev.trigger.value)
    if ev.outcome is not None:
        members["outcome"] = qualified(ev.outcome.value)
    if ev.selected is not None:
        members["selected"] = ev.selected
    if ev.fallback_rung is not None:
        members["fallback-rung"] = qualified(ev.fallback_rung.value)
    return note("decision-recorded", members)


def handoff_note(session: Session, before: Handoff | None, after: Handoff, now: float) -> Json:
    """handoff-state-change."""
    members: Json = {
        "session-id": session.session_id,
        "handoff-id": after.handoff_id,
        "source": after.source,
        "target": after.target,
        "state": after.state.value,
        "at": date_and_time(now),
    }
    if before is not None and before.state is not HandoffState.REQUESTED:
        members["previous-state"] = before.state.value
    if after.abort_reason is not None:
        members["abort-reason"] = qualified(after.abort_reason.value)
    return note("handoff-state-change", members)


def _failed(session: Session, ev: Evaluation, record_id: int, fx: Effects) -> Session:
    report = ev.failure
    if report is None:
        return session
    step: Json = {
        "session-id": session.session_id,
        **render.failure(report),
        "record-id": str(record_id),
    }
    for name, value in (("turn-id", ev.turn_id), ("step-id", ev.step_id)):
        if value is not None:
            step[name] = value
    fx.notes.append(note("step-failed", step))
    if not ev.session_failed:
        return session
    members: Json = {
        "session-id": session.session_id,
        "cause": "no-candidate",
        **render.failure(report),
        "record-id": str(record_id),
    }
    fx.notes.append(note("session-failed", members))
    return replace(session, state="failed", failure=report)


def _new_commitment(
    session: Session, csci_id: CsciId, settings: Settings, record_id: int
) -> tuple[Session, CommitmentRecord]:
    number = session.next_commitment
    commitment_id = ids.commitment_id(session.session_id, number)
    first = session.step if session.step is not None else 1
    entry = CommitmentRecord(
        Commitment(commitment_id, csci_id, first, settings.now, settings.lifetime, first),
        ids.instruction_id(session.session_id, number),
        tuple(e.prefix for e in session.descriptor.endpoints),
        record_id=record_id,
    )
    previous = session.in_force
    if previous is not None:
        session = session.with_commitment(
            replace(previous, state="superseded", superseded_by=commitment_id)
        )
    session = replace(
        session.with_commitment(entry), current=commitment_id, next_commitment=number + 1
    )
    return session, entry


def committed(session: Session, handoff: Handoff, settings: Settings) -> Session:
    """A committed handoff: the commitment moves to the target (P9), the old one is
    superseded; repeated, it changes nothing."""
    if handoff.commitment_id is not None:
        return session.with_handoff(handoff)
    session, entry = _new_commitment(session, handoff.target, settings, handoff.record_id)
    done = replace(handoff, commitment_id=entry.commitment_id)
    if handoff.change_cost:  # M46: the move happened, the session pays for it once
        account = charge_change(session.account, BudgetDimension.TIME, handoff.change_cost)
        session = replace(session, account=account)
    return replace(session.with_handoff(done), last_move_at=settings.now, watching=None)


def release_members(session: Session, handoff: Handoff) -> Json:
    """release-state of a handoff's reservation at its target."""
    return {
        "session-id": session.session_id,
        "tenant": session.tenant,
        "reservation-id": handoff.reservation_id,
        "csci-id": [handoff.target],
    }


def settled_handoff(
    session: Session, before: Handoff | None, after: Handoff, settings: Settings, fx: Effects
) -> Session:
    """Store a handoff after a transition, with its notification, commit or release."""
    if before is not None and before.state is after.state:
        return session.with_handoff(after)
    if after.state is HandoffState.COMMITTED:
        session = committed(session, after, settings)
        after = session.handoff(after.handoff_id) or after
    else:
        session = session.with_handoff(after)
    if after.state is not HandoffState.REQUESTED:
        fx.notes.append(handoff_note(session, before, after, settings.now))
    target = settings.targets.get(after.target)
    was_reserved = any(state is HandoffState.RESERVED for state, _ in after.transitions)
    if after.state is HandoffState.ABORTED and was_reserved and target is not None:
        fx.release.append((target, release_members(session, after)))
    return session


def _moved(
    ev: Evaluation, target: CsciId
) -> tuple[tuple[ReuseKey, ...], int, dict[ReuseKey, float | None], list[Json]]:
    """The working-set elements the target does not hold yet: keys, size, accepted
    divergence, reserve-state elements."""
    view = ev.result(target).candidate.view
    tenant = ev.descriptor.tenant
    keys: list[ReuseKey] = []
    accepted: dict[ReuseKey, float | None] = {}
    elements: list[Json] = []
    size = 0
    for element in ev.descriptor.working_set:
        held = view.state.get((tenant, element.reuse_key))
        if held is not None and held.presence is Presence.PRESENT:
            continue
        keys.append(element.reuse_key)
        accepted[element.reuse_key] = element.max_missing_fraction
        entry: Json = {
            "reuse-key": element.reuse_key,
            "element-class": qualified(element.element_class.value),
        }
        if element.element_size is not None:
            entry["element-size"] = str(element.element_size)
            size += element.element_size
        elements.append(entry)
    return tuple(keys), size, accepted, elements


def transfer_source(ev: Evaluation, target: CsciId) -> CsciId | None:
    """The candidate a placement without a commitment must take state from, None when its
    valuation assumed no transfer (P5, 6.7): the target misses part of the working set and
    its state cost is the transfer (cheaper than, or instead of, a rebuild). The source is
    the candidate that holds most of the missing keys present."""
    result = ev.result(target)
    if result.scored is None:
        return None
    plan = result.scored.valuation.measures.storage
    if not plan.missing_bytes or plan.transfer_time is None:
        return None
    if plan.recompute_time is not None and plan.recompute_time < plan.transfer_time:
        return None
    keys, _, _, _ = _moved(ev, target)
    tenant = ev.descriptor.tenant
    best: tuple[int, CsciId] | None = None
    for other in ev.results:
        if other.csci_id == target:
            continue
        state = other.candidate.view.state
        count = sum(
            1
            for key in keys
            if (found := state.get((tenant, key))) is not None
            and found.presence is Presence.PRESENT
        )
        if count and (best is None or count > best[0]):
            best = (count, other.csci_id)
    return None if best is None else best[1]


def _start_handoff(
    session: Session, ev: Evaluation, record_id: int, settings: Settings, fx: Effects
) -> tuple[Session, str]:
    """P9 begins: reserve at the target (rate-limited, 14); a handoff already on its way to
    the same target is reused (no second reservation); one to another target is superseded.
    The source is the instance in force, or, for a session without a commitment (a first
    placement whose valuation assumed a transfer), the holder :func:`transfer_source` names."""
    target = ev.selected
    assert target is not None
    source = session.in_force
    source_id = transfer_source(ev, target) if source is None else source.commitment.csci_id
    assert source_id is not None
    for other in session.handoffs:
        if not other.terminal and other.target == target:
            return session, other.handoff_id
        if not other.terminal:
            session = settled_handoff(
                session,
                other,
                aborted(other, AbortReason.SUPERSEDED, f"move to {target}", settings.now),
                settings,
                fx,
            )
    handoff_id = ids.handoff_id(session.session_id, record_id)
    keys, size, accepted, elements = _moved(ev, target)
    handoff = Handoff(
        handoff_id,
        session.session_id,
        source_id,
        target,
        record_id,
        settings.now,
        settings.now + settings.handoff_timeout,
        keys,
        size,
        accepted,
        reservation_id=ids.reservation_id(session.session_id, record_id),
        change_cost=None if ev.change is None else ev.change.cost,
    )
    allowed, rate = session.reservations.admit(settings.now, settings.max_reservation_rate, None)
    session = replace(session, reservations=rate)
    sma = settings.targets.get(target)
    if not keys:
        done = replace(
            handoff,
            state=HandoffState.COMMITTED,
            reservation_id="",
            transitions=((HandoffState.COMMITTED, settings.now),),
        )
        return settled_handoff(session, None, done, settings, fx), handoff_id
    if not allowed or sma is None:
        why = "reservation rate of the session exceeded (14)" if not allowed else "no C-SMA"
        stopped = aborted(handoff, AbortReason.RESERVATION_REFUSED, why, settings.now)
        return settled_handoff(
            session, None, replace(stopped, reservation_id=""), settings, fx
        ), handoff_id
    members: Json = {
        "reservation-id": handoff.reservation_id,
        "session-id": session.session_id,
        "tenant": session.tenant,
        "handoff-id": handoff_id,
        "csci-id": target,
        "element": elements,
        "size": str(size),
        "needed-by": date_and_time(handoff.deadline),
    }
    fx.reserve.append((handoff, sma, members))
    return session.with_handoff(handoff), handoff_id


def settle(
    session: Session,
    ev: Evaluation,
    descriptor_doc: Json,
    settings: Settings,
    invalidation: Invalidation | None = None,
) -> tuple[Session, Settled, Effects]:
    """Record one evaluation and apply its outcome to the session (P8, start of P9)."""
    fx = Effects()
    record_id = session.next_record
    held: CommitmentRecord | None = None
    handoff_id: str | None = None
    if ev.failure is not None:
        session = _failed(session, ev, record_id, fx)
    elif ev.selected is not None:
        current = session.in_force
        source = transfer_source(ev, ev.selected) if current is None else None
        if source is not None:  # the valuation assumed a transfer: reserve, transfer, commit
            session, handoff_id = _start_handoff(session, ev, record_id, settings, fx)
        elif current is None:
            session, held = _new_commitment(session, ev.selected, settings, record_id)
        elif ev.selected == current.commitment.csci_id:
            held = current.extended(session.step, settings.now)
            session = session.with_commitment(held)
            watching = session.watching
            if ev.outcome is Outcome.HOLD_AND_WATCH and ev.change is not None:
                rival = ev.change.to_csci
                if rival is not None and (watching is None or watching[0] != rival):
                    watching = (rival, settings.now)
            elif ev.outcome is Outcome.KEEP:
                watching = None
            session = replace(session, watching=watching)
        else:
            session, handoff_id = _start_handoff(session, ev, record_id, settings, fx)
            held = session.in_force
            if held is not None and held.commitment_id == current.commitment_id:
                # not committed at once: until it is, the step runs at the source (P9), so
                # its rule covers this step too; aborted, the session goes on there
                held = held.extended(session.step, settings.now)
                session = session.with_commitment(held)
    record = ev.record(
        record_id,
        commitment_id=None if held is None else held.commitment_id,
        handoff_id=handoff_id,
        invalidation=invalidation,
    )
    kept, values = compaction.compact(ev, settings.intern, settings.last)
    session = session.with_record(
        Kept(replace(record, evaluation=kept), descriptor_doc, values), settings.max_records
    )
    fx.notes.insert(0, recorded(session, record_id, ev))
    return session, Settled(record_id, held, handoff_id), fx


def releases(
    session: Session, released: list[str] | None, settings: Settings
) -> list[tuple[Target, Json]]:
    """release-state (MSG-16) at each C-SMA of an instance the session was committed or
    handed off to: the released keys, else the whole working set (DP10)."""
    by_target: dict[Target, list[str]] = {}
    used = {c.commitment.csci_id for c in session.commitments}
    used |= {h.target for h in session.handoffs}
    for csci_id in sorted(used):
        target = settings.targets.get(csci_id)
        if target is not None:
            by_target.setdefault(target, []).append(csci_id)
    keys = released or [str(e.reuse_key) for e in session.descriptor.working_set]
    found: list[tuple[Target, Json]] = []
    for target, csci_ids in by_target.items():
        release: Json = {
            "session-id": session.session_id,
            "tenant": session.tenant,
            "csci-id": csci_ids,
        }
        if keys:
            release["reuse-key"] = list(keys)
        found.append((target, release))
    return found


def refused_step(descriptor: Descriptor, policy: Policy, now: Timestamp) -> Evaluation:
    """DP9 refused the session's steps: the step fails naming the budget (P11)."""
    report = FailureReport(
        Element.BUDGET,
        Trigger.T9,
        DecisionPoint.DP9,
        (FallbackRung.FAIL_STEP,),
        (),
        "the session budget refuses further steps (DP9)",
    )
    d = descriptor
    return Evaluation(
        d.session_id,
        d.turn_id,
        d.step_id,
        DecisionPoint.DP9,
        Trigger.T9,
        now,
        d,
        policy.context.combination,
        (),
        fallback_rung=FallbackRung.FAIL_STEP,
        failure=report,
    )
