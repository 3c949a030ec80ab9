"""P7, change cost and the stability rules of 8.3 (M10, M31, M32, M37, M47).

The gain of a move is the time saved at every step (forwarding and computing) over the
remaining steps of the look-ahead horizon; the cost of the move is what is paid once:
transfer or rebuild of the state, artifact load, and the disturbance of a step in flight,
net of what staying would pay once anyway (state evicted during a pause). The four rules:

1. a minimum interval between two moves of the session;
2. a minimum improvement of suitability;
3. the gain over the horizon exceeds the change cost;
4. a step in flight is not moved on a preference.

They apply to every trigger except T6 and T8. An unquantified change cost means stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from controller.selection.mapping.combination import Scored
from controller.selection.mapping.context import Occasion, SelectionContext, SessionPosition
from controller.selection.mapping.prepared import horizon
from controller.selection.mapping.vocabulary import Outcome, Trigger
from controller.selection.units import Timestamp
from controller.types import CsciId

EXEMPT = frozenset({Trigger.T6, Trigger.T8})
"""Triggers where a constraint is at risk and the stability rules do not apply (8.3)."""


@dataclass(frozen=True, slots=True)
class ChangeAssessment:
    """The ``change`` of a decision record: cost paid once, gain over the horizon (P7).

    Times in seconds; ``gain`` is on the suitability scale, ``gain_time`` is the time saved
    over ``horizon_steps``; ``cost`` is None when the change cost cannot be quantified.
    """

    from_csci: CsciId | None
    to_csci: CsciId | None
    transfer_or_rebuild: float | None = None
    artifact_load: float | None = None
    disturbance: float = 0.0
    cost: float | None = None
    gain: float | None = None
    gain_time: float | None = None
    horizon_steps: int = 0


@dataclass(frozen=True, slots=True)
class StabilityCheck:
    """The stability requirement as applied (record ``stability``)."""

    applied: bool
    step_in_flight: bool
    min_interval_met: bool | None = None
    min_improvement_met: bool | None = None
    gain_covers_cost: bool | None = None
    sustained: bool | None = None


@dataclass(frozen=True, slots=True)
class Judgement:
    """The P7 output: keep, hold-and-watch or move, and to which candidate."""

    outcome: Outcome
    selected: CsciId
    change: ChangeAssessment
    stability: StabilityCheck
    constraint_violated: bool = False


def assess(
    current: Scored, best: Scored, context: SelectionContext, steps: int, *, in_flight: bool
) -> ChangeAssessment:
    """Cost paid once against gain over ``steps`` for moving from ``current`` to ``best``."""
    disturbance = context.disturbance if in_flight else 0.0
    target_once = best.once
    cost = None
    if target_once is not None:
        cost = max(target_once - (current.once or 0.0), 0.0) + disturbance
    gain = None
    if current.suitability is not None and best.suitability is not None:
        gain = (best.suitability - current.suitability) * steps
    saved = None
    if current.recurring is not None and best.recurring is not None:
        saved = (current.recurring - best.recurring) * steps
    return ChangeAssessment(
        current.csci_id,
        best.csci_id,
        best.valuation.storage,
        best.valuation.artifact_load,
        disturbance,
        cost,
        gain,
        saved,
        steps,
    )


_EPSILON = 1e-9  # decimal64 thresholds compared with binary floats: 0.1 is met by 0.1


def relative_improvement(current: float | None, best: float | None) -> float | None:
    """The improvement of suitability as a fraction of the current one's magnitude (8.3:
    'a value which fluctuates inside a band' is a relative notion; min-improvement 0.1 asks
    for 10 %). A current suitability of zero makes any gain infinite, any loss nothing."""
    if current is None or best is None:
        return None
    gain = best - current
    if current == 0:
        return float("inf") if gain > 0 else 0.0
    return gain / abs(current)


def _sustained(
    position: SessionPosition, best: CsciId, context: SelectionContext, now: Timestamp
) -> bool:
    if context.stability.sustain_period <= 0:
        return True
    watching = position.watching
    return (
        watching is not None
        and watching[0] == best
        and now - watching[1] >= context.stability.sustain_period
    )


def judge(
    ranked: Sequence[Scored],
    position: SessionPosition,
    context: SelectionContext,
    occasion: Occasion,
) -> Judgement:
    """Keep, hold-and-watch or move (P7); ``ranked`` is the non-empty eligible set, best first."""
    trigger, now = occasion.trigger, occasion.now
    best = ranked[0]
    in_flight = position.step_in_flight
    current_id = position.current
    current = next((entry for entry in ranked if entry.csci_id == current_id), None)
    exempt = trigger in EXEMPT
    if current_id is None or current is None:
        violated = current_id is not None
        change = ChangeAssessment(
            current_id,
            best.csci_id,
            best.valuation.storage,
            best.valuation.artifact_load,
            cost=best.once,
        )
        check = StabilityCheck(applied=False, step_in_flight=in_flight)
        return Judgement(Outcome.MOVE, best.csci_id, change, check, constraint_violated=violated)
    steps = horizon(context, occasion.remaining_horizon)
    if best is current or exempt:
        rival = ranked[1] if best is current and len(ranked) > 1 else None
        change = ChangeAssessment(current_id, best.csci_id)
        if rival is not None:
            change = assess(current, rival, context, steps, in_flight=in_flight)
        return Judgement(Outcome.KEEP, current_id, change, StabilityCheck(not exempt, in_flight))
    change = assess(current, best, context, steps, in_flight=in_flight)
    rules = context.stability
    improvement = relative_improvement(current.suitability, best.suitability)
    check = StabilityCheck(
        applied=True,
        step_in_flight=in_flight,
        min_interval_met=position.last_move_at is None
        or now - position.last_move_at >= rules.min_interval,
        min_improvement_met=improvement is not None
        and improvement > 0
        and improvement >= rules.min_improvement - _EPSILON,
        gain_covers_cost=None
        if change.cost is None or change.gain_time is None
        else change.gain_time > change.cost,
        sustained=_sustained(position, best.csci_id, context, now)
        if trigger is Trigger.T5
        else None,
    )
    if not check.min_improvement_met:
        return Judgement(Outcome.KEEP, current_id, change, check)
    movable = (
        check.min_interval_met
        and check.gain_covers_cost is True
        and not in_flight
        and check.sustained is not False
    )
    if movable:
        return Judgement(Outcome.MOVE, best.csci_id, change, check)
    return Judgement(Outcome.HOLD_AND_WATCH, current_id, change, check)
