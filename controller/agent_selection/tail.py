"""P10 on the wire: MSG-14 step progress in, the tail decision applied to the session (8.4).

Pure helpers of the invalidation-notice handler: the step progress of the notice, whether
the step's objective is violated, the alternative a re-evaluation without the current
instance offers, and the evaluation that records what P10 decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from controller.agent_selection.decide import note
from controller.agent_selection.values import ident, qualified, seconds
from controller.selection.mapping import (
    Alternative,
    Descriptor,
    Evaluation,
    StepProgress,
    TailDecision,
)
from controller.selection.mapping.vocabulary import (
    FallbackRung,
    InvalidationCondition,
    Outcome,
    TailAction,
    Trigger,
)
from controller.types import CsciId, Json, Prefix

CONDITION_TRIGGER = {
    InvalidationCondition.VALUE_EXPIRED: Trigger.T4,
    InvalidationCondition.VALUE_CONTRADICTED: Trigger.T4,
    InvalidationCondition.INSTANCE_DEGRADED: Trigger.T7,
    InvalidationCondition.STATE_EVICTED: Trigger.T6,
    InvalidationCondition.ENDPOINT_LOST: Trigger.T6,
    InvalidationCondition.STEP_OVERRUN: Trigger.T8,
}
"""The trigger each MSG-14 condition raises (8.3); T7 raises DP7 (no point of its own)."""


def progress(members: Mapping[str, Any]) -> StepProgress | None:
    """The step-progress of an invalidation notice (None when it has none)."""
    found = members.get("step-progress")
    if found is None:
        return None
    endpoint = found.get("endpoint")
    return StepProgress(
        seconds(found["elapsed"]) or 0.0,
        seconds(found["expected"]) or 0.0,
        None if endpoint is None else Prefix(str(endpoint)),
        seconds(found.get("remaining")),
    )


def condition(members: Mapping[str, Any]) -> InvalidationCondition:
    """The invalidation-condition of a notice."""
    return InvalidationCondition(ident(members["condition"]))


def violated(descriptor: Descriptor, step: StepProgress) -> bool:
    """The step's objective can no longer be met: elapsed plus what remains exceeds it."""
    targets = [o.target for o in descriptor.objectives]
    if not targets:
        return False
    return step.elapsed + (step.remaining or 0.0) > min(targets)


def alternative(elsewhere: Evaluation) -> Alternative:
    """What a re-evaluation without the current instance offers a running step."""
    best = elsewhere.selected
    if best is None:
        return Alternative(None, None, None, elsewhere.exclusions)
    scored = elsewhere.result(best).scored
    once = None if scored is None else scored.once
    recurring = None if scored is None else scored.recurring
    return Alternative(best, once, recurring, elsewhere.exclusions)


def applied(ev: Evaluation, decision: TailDecision, current: CsciId | None) -> Evaluation:
    """The evaluation that records P10's decision: degrade in place, migrate, or fail."""
    if decision.action is TailAction.DEGRADE:
        return replace(
            ev,
            outcome=Outcome.KEEP,
            selected=current,
            fallback_rung=FallbackRung.DEGRADE_WITHIN_CLASS,
            degradation_applied=decision.degradation_applied,
        )
    if decision.action is TailAction.MIGRATE:
        return replace(
            ev,
            outcome=Outcome.MOVE,
            selected=decision.migrate_to,
            fallback_rung=FallbackRung.MOVE_WORK,
        )
    return replace(
        ev,
        outcome=None,
        selected=None,
        suitability=None,
        failure=decision.failure,
        fallback_rung=FallbackRung.FAIL_STEP,
    )


def truncated_doc(doc: Json, descriptor: Descriptor) -> Json:
    """The descriptor members with the working set the degraded descriptor kept (M27)."""
    kept = {e.reuse_key for e in descriptor.working_set}
    elements = doc.get("working-set", {}).get("element", [])
    updated = dict(doc)
    remaining = [e for e in elements if e["reuse-key"] in kept]
    updated["working-set"] = {"element": remaining} if remaining else {}
    return updated


def tail_note(
    members: Mapping[str, Any],
    factor: float,
    decision: TailDecision,
    record_id: int | None,
    current: CsciId | None,
) -> Json:
    """tail-event."""
    step = members["step-progress"]
    found: Json = {
        "session-id": members["session-id"],
        "elapsed": step["elapsed"],
        "expected": step["expected"],
        "factor": f"{factor:.2f}",
        "action": decision.action.value,
        "reporter": members["reporter"],
    }
    for name in ("turn-id", "step-id"):
        if name in members:
            found[name] = members[name]
    if "endpoint" in step:
        found["endpoint"] = step["endpoint"]
    if current is not None:
        found["csci-id"] = current
    if decision.degradation_applied:
        found["degradation-applied"] = [qualified(d.value) for d in decision.degradation_applied]
    if record_id is not None:
        found["record-id"] = str(record_id)
    return note("tail-event", found)
