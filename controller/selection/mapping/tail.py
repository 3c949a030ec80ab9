"""P10 tail detection and the fallback ladder of 8.4 (M35, M36).

A running step whose elapsed time exceeds its expectation by the stated factor is a tail
event (T8). The ladder is applied in order: re-band (relax a preference, keep every
constraint), degrade within the degradation class the descriptor permits, move the work
(a started step only when a constraint is violated and degradation cannot absorb it), fail
the step with a report naming the constraint, the trigger and every rejected candidate with
its reason, and fail the session.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from controller.selection.mapping.context import Policy, TierCatalogue
from controller.selection.mapping.descriptor import Descriptor
from controller.selection.mapping.findings import Exclusion
from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    DecisionPoint,
    DegradationClass,
    Element,
    FallbackRung,
    Precision,
    Role,
    TailAction,
    Trigger,
)
from controller.types import CsciId, Prefix

ENDPOINT_RELIEF = (DegradationClass.TRUNCATED_WORKING_SET, DegradationClass.ADDITIONAL_DELAY)
"""What absorbs a tool or retrieval call that overruns: a reduced set, or more delay."""
COMPUTE_RELIEF = (
    DegradationClass.LOWER_PRECISION,
    DegradationClass.LOWER_CAPABILITY_TIER,
    DegradationClass.ADDITIONAL_DELAY,
)
"""What absorbs a model step that overruns."""


def is_tail_event(elapsed: float, expected: float, factor: float) -> bool:
    """P10: the running step exceeds its expected cost by the stated factor (M35)."""
    return elapsed > expected * factor


@dataclass(frozen=True, slots=True)
class FailureReport:
    """The report of a failed step or session (failure-report): the constraint, the trigger,
    the rungs attempted in order and every rejected candidate with its reason (8.4 rung 4)."""

    constraint: Element | None
    trigger: Trigger | None
    decision_point: DecisionPoint | None
    rungs_attempted: tuple[FallbackRung, ...]
    rejected: tuple[Exclusion, ...]
    detail: str = ""


def failure(
    rejected: Sequence[Exclusion],
    trigger: Trigger | None,
    decision_point: DecisionPoint | None,
    rungs: Sequence[FallbackRung],
    detail: str = "",
) -> FailureReport:
    """A failure report; the constraint named is the one that rejected the most candidates."""
    counts = Counter(exclusion.constraint for exclusion in rejected)
    constraint = counts.most_common(1)[0][0] if counts else None
    return FailureReport(constraint, trigger, decision_point, tuple(rungs), tuple(rejected), detail)


_LOWER = tuple(Precision)


def _lower_precision(descriptor: Descriptor, _: TierCatalogue) -> Descriptor | None:
    if not descriptor.required_precision:
        return None
    lowest = max(_LOWER.index(p) for p in descriptor.required_precision)
    if lowest + 1 >= len(_LOWER):
        return None
    widened = descriptor.required_precision | {_LOWER[lowest + 1]}
    return replace(descriptor, required_precision=frozenset(widened))


def _lower_tier(descriptor: Descriptor, tiers: TierCatalogue) -> Descriptor | None:
    tier = descriptor.capability_tier
    lower = None if tier is None else tiers.below(tier)
    return None if lower is None else replace(descriptor, capability_tier=lower)


def _truncated(descriptor: Descriptor, _: TierCatalogue) -> Descriptor | None:
    kept = tuple(e for e in descriptor.working_set if e.sufficient)
    if len(kept) == len(descriptor.working_set):
        return None
    return descriptor.with_working_set(kept)


def _delayed(descriptor: Descriptor, _: TierCatalogue) -> Descriptor | None:
    added = descriptor.max_added_delay
    if not added:
        return None
    objectives = tuple(
        replace(o, target=o.target + added) if o.role is Role.CONSTRAINT else o
        for o in descriptor.objectives
    )
    budgets = tuple(
        replace(b, limit=b.limit + added) if b.dimension is BudgetDimension.TIME else b
        for b in descriptor.budgets
    )
    return replace(descriptor, objectives=objectives, budgets=budgets)


_REDUCE: dict[DegradationClass, Callable[[Descriptor, TierCatalogue], Descriptor | None]] = {
    DegradationClass.LOWER_PRECISION: _lower_precision,
    DegradationClass.LOWER_CAPABILITY_TIER: _lower_tier,
    DegradationClass.TRUNCATED_WORKING_SET: _truncated,
    DegradationClass.ADDITIONAL_DELAY: _delayed,
}


def degrade(
    descriptor: Descriptor, reduction: DegradationClass, tiers: TierCatalogue
) -> Descriptor | None:
    """The descriptor with one permitted reduction applied, None when it changes nothing.

    Only a reduction the descriptor lists is applied (rung 2 of 8.4): a lower precision adds
    the next lower format, a lower tier steps one rank down the catalogue, a truncated working
    set keeps the elements marked sufficient (M27), additional delay widens the tail objective
    and the time budgets by ``max_added_delay``. Every other constraint is kept.
    """
    if reduction not in descriptor.degradation:
        return None
    return _REDUCE[reduction](descriptor, tiers)


@dataclass(frozen=True, slots=True)
class StepProgress:
    """The progress of a running step (invalidation-notice step-progress), in seconds.

    ``endpoint`` names the tool or data call that overran (None: the model step itself);
    ``remaining`` estimates the time still needed at the current instance (None: unknown).
    """

    elapsed: float
    expected: float
    endpoint: Prefix | None = None
    remaining: float | None = None


@dataclass(frozen=True, slots=True)
class Alternative:
    """What a re-evaluation (P4-P7 without the current instance) offers a running step: the
    best eligible candidate (None: none) with what moving would cost, and the candidates it
    rejected, with their reasons, for the report of a failed step."""

    csci_id: CsciId | None
    change_cost: float | None
    step_time: float | None
    rejected: tuple[Exclusion, ...] = ()


@dataclass(frozen=True, slots=True)
class TailDecision:
    """What P10 decided about a running step (tail-event notification)."""

    tail: bool
    action: TailAction
    rung: FallbackRung | None = None
    degradation_applied: tuple[DegradationClass, ...] = ()
    descriptor: Descriptor | None = None
    migrate_to: CsciId | None = None
    failure: FailureReport | None = None


def _migration(progress: StepProgress, alternative: Alternative | None) -> CsciId | None:
    """The target when moving removes more delay than it costs; None when unquantified."""
    if alternative is None or alternative.csci_id is None or progress.remaining is None:
        return None
    cost, step_time = alternative.change_cost, alternative.step_time
    if cost is None or step_time is None or cost + step_time >= progress.remaining:
        return None
    return alternative.csci_id


def on_tail_event(
    progress: StepProgress,
    descriptor: Descriptor,
    policy: Policy,
    *,
    alternative: Alternative | None = None,
    constraint_violated: bool = False,
) -> TailDecision:
    """P10 for one running step: degrade within class, migrate, or fail with a report (T8).

    The detection factor is the context's (M35). A permitted reduction that absorbs the kind
    of overrun (a reduced retrieval set or more delay for a tool call; lower precision, lower
    tier or more delay for the model) is applied first (M36). A started step moves only when
    a constraint is violated, no reduction absorbs it, and the move removes more delay than
    it costs; otherwise the step fails with a report naming the objective and T8.
    """
    factor = policy.context.tail_detection_factor
    if not is_tail_event(progress.elapsed, progress.expected, factor):
        return TailDecision(tail=False, action=TailAction.NONE)
    relief = ENDPOINT_RELIEF if progress.endpoint is not None else COMPUTE_RELIEF
    for reduction in descriptor.degradation:
        degraded = degrade(descriptor, reduction, policy.tiers) if reduction in relief else None
        if degraded is not None:
            return TailDecision(
                tail=True,
                action=TailAction.DEGRADE,
                rung=FallbackRung.DEGRADE_WITHIN_CLASS,
                degradation_applied=(reduction,),
                descriptor=degraded,
            )
    target = _migration(progress, alternative) if constraint_violated else None
    if target is not None:
        return TailDecision(
            tail=True, action=TailAction.MIGRATE, rung=FallbackRung.MOVE_WORK, migrate_to=target
        )
    rungs = (FallbackRung.DEGRADE_WITHIN_CLASS, FallbackRung.MOVE_WORK, FallbackRung.FAIL_STEP)
    detail = (
        f"elapsed {progress.elapsed:.3f} s against {progress.expected:.3f} s expected "
        f"(factor {factor}); no permitted degradation absorbs it"
    )
    rejected = () if alternative is None else alternative.rejected
    report = FailureReport(
        Element.OBJECTIVE, Trigger.T8, DecisionPoint.DP8, rungs, rejected, detail
    )
    return TailDecision(
        tail=True, action=TailAction.FAIL_STEP, rung=FallbackRung.FAIL_STEP, failure=report
    )
