"""The ``sessions`` state of ietf-cats-agent-selection, rendered when read (6.4, 6.5, 7.3).

Every reuse key in it is the tenant-scoped handle of :class:`KeyScope` (15), so one
tenant's keys cannot be linked to another's by whoever reads the state.
"""

from __future__ import annotations

from collections.abc import Mapping

from controller.agent_selection import render
from controller.agent_selection.handoff import HandoffState
from controller.agent_selection.sessions import KeyScope, Session
from controller.agent_selection.values import date_and_time, qualified
from controller.selection.mapping import BudgetLine, SessionAccount, SourceAccuracy
from controller.selection.mapping.vocabulary import BudgetDimension
from controller.selection.units import Timestamp
from controller.types import CsciId, Json, SourceId


def amount(dimension: BudgetDimension, value: float) -> str:
    """A budget-amount: milliseconds for time, the dimension's own unit otherwise."""
    scaled = value * 1000.0 if dimension is BudgetDimension.TIME else value
    return f"{max(scaled, 0.0):.3f}"


def budget_line(line: BudgetLine, reserve: float | None = None) -> Json:
    """One budget entry of a budget-account."""
    d = line.dimension
    found: Json = {"dimension": qualified(d.value), "consumed": amount(d, line.consumed)}
    if line.limit is not None:
        found["limit"] = amount(d, line.limit)
        found["kind"] = line.kind.value
        remaining = line.remaining
        if remaining is not None:
            found["remaining"] = amount(d, remaining)
    if reserve is not None:
        found["reserve"] = amount(d, reserve)
    if line.change_cost:
        found["change-cost"] = amount(d, line.change_cost)
    return found


def _lines(lines: Mapping[BudgetDimension, BudgetLine]) -> list[Json]:
    return [budget_line(line) for line in lines.values()]


def accounting(account: SessionAccount, reserves: Mapping[BudgetDimension, float]) -> Json:
    """The accounting container: session, turn and step lines (P11, M13)."""
    found: Json = {"unattributed-reports": str(account.unattributed)}
    session = [budget_line(line, reserves.get(d)) for d, line in account.session.items()]
    if session:
        found["budget"] = session
    turns: list[Json] = []
    for turn_id, lines in sorted(account.turns.items()):
        steps = [
            {"step-id": step_id, "budget": _lines(step_lines)}
            for (turn, step_id), step_lines in sorted(account.steps.items())
            if turn == turn_id
        ]
        entry: Json = {"turn-id": turn_id, "budget": _lines(lines)}
        if steps:
            entry["step"] = steps
        turns.append(entry)
    if turns:
        found["turn"] = turns
    return found


def session_json(
    session: Session,
    context: Json,
    reserves: Mapping[BudgetDimension, float],
    scope: KeyScope,
    now: Timestamp,
) -> Json:
    """One ``session`` entry with its reuse keys scoped to its tenant; a commitment is shown
    as it stands at ``now`` (an active one past its expiry is expired)."""
    found: Json = {
        "session-id": session.session_id,
        "tenant": session.tenant,
        "service-id": session.service_id,
        "state": session.state,
        "admitted-at": date_and_time(session.admitted_at),
        "last-activity": date_and_time(session.last_activity),
        "step-in-flight": session.step_in_flight,
        "descriptor": session.descriptor_doc,
        "selection-context": context,
        "accounting": accounting(session.account, reserves),
    }
    if session.turn is not None:
        found["current-turn"] = session.turn
    if session.step is not None:
        found["current-step"] = session.step
    if session.current is not None:
        found["current-commitment"] = session.current
    records = [
        render.decision_record(
            kept.record.record_id,
            kept.record.evaluation,
            kept.descriptor,
            _record_extra(kept.record),
            kept.values or None,
        )
        for kept in session.records
    ]
    if records:
        found["decision-record"] = records
    if session.commitments:
        found["commitment"] = [
            render.commitment(c, state=c.state_at(now)) for c in session.commitments
        ]
    handoffs = [
        render.handoff(h) for h in session.handoffs if h.state is not HandoffState.REQUESTED
    ]
    if handoffs:
        found["handoff"] = handoffs
    if session.failure is not None:
        found["failure"] = {**render.failure(session.failure), "handling": "end"}
    scoped: Json = scope.document(session.tenant, found)
    return scoped


def _record_extra(record: object) -> Json:
    extra: Json = {}
    commitment_id = getattr(record, "commitment_id", None)
    handoff_id = getattr(record, "handoff_id", None)
    invalidation = getattr(record, "invalidation", None)
    if commitment_id is not None:
        extra["commitment-id"] = commitment_id
    if handoff_id is not None:
        extra["handoff-id"] = handoff_id
    if invalidation is not None:
        found: Json = {
            "condition": qualified(invalidation.condition.value),
            "acted-on": invalidation.acted_on,
        }
        if invalidation.element is not None:
            found["element"] = qualified(invalidation.element.value)
        extra["invalidation"] = found
    return extra


def accuracy_json(
    advertiser: Mapping[CsciId, SourceId], accuracy: Mapping[SourceId, SourceAccuracy]
) -> list[Json]:
    """``candidate`` entries with the source-accuracy of each candidate's advertiser (14)."""
    found: list[Json] = []
    for csci_id, source in advertiser.items():
        record = accuracy.get(source)
        if record is not None:
            counts: Json = {
                "contradicted-values": str(record.contradicted),
                "tail-underreports": str(record.tail_underreports),
                "discount": f"{record.discount():.4f}",
            }
            found.append({"csci-id": csci_id, "source-accuracy": counts})
    return found
