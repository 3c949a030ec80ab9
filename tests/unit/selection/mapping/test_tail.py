"""P10 tail detection and the fallback ladder of 8.4 (M27, M35, M36)."""

from __future__ import annotations

from dataclasses import replace

from controller.selection.mapping import (
    Alternative,
    Objective,
    Policy,
    SelectionContext,
    StepProgress,
    degrade,
    is_tail_event,
    on_tail_event,
)
from controller.selection.mapping.descriptor import Budget
from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    BudgetKind,
    DecisionPoint,
    DegradationClass,
    Element,
    ElementClass,
    FallbackRung,
    ObjectiveQuantity,
    Precision,
    Reason,
    Role,
    Scope,
    TailAction,
    Trigger,
)
from controller.types import CsciId, Prefix, TierName
from tests.unit.selection.mapping.builders import TIERS, WINDOW, candidate, descriptor, element, run

DC = DegradationClass
TOOL = Prefix("192.0.2.0/24")
POLICY = Policy(SelectionContext(tail_detection_factor=10.0), TIERS)


def test_m35_a_tail_event_is_an_overrun_by_the_stated_factor() -> None:
    assert is_tail_event(4.0, 0.1, 10.0) is True
    assert is_tail_event(1.0, 0.1, 10.0) is False
    assert is_tail_event(1.01, 0.1, 10.0) is True
    assert is_tail_event(1.01, 0.1, 20.0) is False


def test_m35_no_tail_no_action() -> None:
    decision = on_tail_event(StepProgress(0.5, 0.1, TOOL), descriptor(), POLICY)
    assert (decision.tail, decision.action) == (False, TailAction.NONE)


def test_m36_a_model_overrun_is_absorbed_by_a_lower_precision_first_when_listed_first() -> None:
    step = descriptor(
        required_precision=frozenset({Precision.BF16}),
        degradation=(DC.LOWER_PRECISION, DC.LOWER_CAPABILITY_TIER),
    )
    decision = on_tail_event(StepProgress(12.0, 1.0), step, POLICY)
    assert decision.action is TailAction.DEGRADE
    assert decision.degradation_applied == (DC.LOWER_PRECISION,)
    assert decision.descriptor is not None
    assert decision.descriptor.required_precision == {Precision.BF16, Precision.FP16}


def test_m36_a_tool_overrun_is_not_absorbed_by_a_compute_reduction() -> None:
    step = descriptor(degradation=(DC.LOWER_CAPABILITY_TIER,))
    decision = on_tail_event(StepProgress(4.0, 0.1, TOOL), step, POLICY)
    assert decision.action is TailAction.FAIL_STEP
    assert decision.failure is not None
    assert (decision.failure.constraint, decision.failure.trigger) == (
        Element.OBJECTIVE,
        Trigger.T8,
    )
    assert decision.failure.decision_point is DecisionPoint.DP8


def test_m36_migrate_only_when_a_constraint_is_violated_and_the_move_removes_more_delay() -> None:
    step = descriptor()
    progress = StepProgress(4.0, 0.1, TOOL, remaining=10.0)
    cheap = Alternative(CsciId("B"), change_cost=1.0, step_time=2.0)
    moved = on_tail_event(progress, step, POLICY, alternative=cheap, constraint_violated=True)
    on_preference = on_tail_event(progress, step, POLICY, alternative=cheap)
    unquantified = on_tail_event(
        progress,
        step,
        POLICY,
        constraint_violated=True,
        alternative=Alternative(CsciId("B"), None, 2.0),
    )
    assert (moved.action, moved.migrate_to, moved.rung) == (
        TailAction.MIGRATE,
        "B",
        FallbackRung.MOVE_WORK,
    )
    assert on_preference.action is TailAction.FAIL_STEP
    assert unquantified.action is TailAction.FAIL_STEP


def test_m27_truncation_keeps_the_sufficient_part_of_the_working_set() -> None:
    core = element("core", ElementClass.RETRIEVED_MATERIAL, 1e6, 100)
    extra = element("extra", ElementClass.RETRIEVED_MATERIAL, 9e6, 900, sufficient=False)
    step = descriptor(working_set=(core, extra), degradation=(DC.TRUNCATED_WORKING_SET,))
    truncated = degrade(step, DC.TRUNCATED_WORKING_SET, TIERS)
    assert truncated is not None
    assert truncated.working_set == (core,)
    assert degrade(truncated, DC.TRUNCATED_WORKING_SET, TIERS) is None


def test_degradation_not_listed_is_never_applied() -> None:
    assert degrade(descriptor(), DC.LOWER_CAPABILITY_TIER, TIERS) is None


def test_lower_tier_and_additional_delay() -> None:
    tail = Objective(
        ObjectiveQuantity.STEP_COMPLETION_TIME, 1.0, 95.0, WINDOW, role=Role.CONSTRAINT
    )
    budget = Budget(BudgetDimension.TIME, Scope.STEP, 2.0, BudgetKind.CEILING)
    step = descriptor(
        objectives=(tail,),
        budgets=(budget,),
        max_added_delay=0.5,
        degradation=(DC.LOWER_CAPABILITY_TIER, DC.ADDITIONAL_DELAY),
    )
    lower = degrade(step, DC.LOWER_CAPABILITY_TIER, TIERS)
    delayed = degrade(step, DC.ADDITIONAL_DELAY, TIERS)
    assert lower is not None
    assert lower.capability_tier == TierName("small")
    assert delayed is not None
    assert delayed.objectives[0].target == 1.5
    assert delayed.budgets[0].limit == 2.5


def test_84_rung_2_degrades_within_class_when_no_candidate_is_eligible() -> None:
    step = descriptor(degradation=(DC.LOWER_CAPABILITY_TIER,))
    result = run(step, [candidate("A", tier="small")])
    assert result.selected == "A"
    assert result.fallback_rung is FallbackRung.DEGRADE_WITHIN_CLASS
    assert result.degradation_applied == (DC.LOWER_CAPABILITY_TIER,)
    assert result.descriptor.capability_tier == TierName("small")


def test_84_rung_4_fails_the_step_naming_constraint_trigger_and_every_rejection() -> None:
    step = descriptor(step_id=7, context_length=100_000)
    result = run(
        step,
        [candidate("A", tier="small"), candidate("B", tier="small", context_window=8_000)],
        trigger=Trigger.T1,
    )
    assert result.outcome is None
    assert result.selected is None
    assert result.session_failed is False
    report = result.failure
    assert report is not None
    assert report.constraint is Element.CAPABILITY_TIER
    assert report.trigger is Trigger.T1
    assert report.rungs_attempted == (
        FallbackRung.RE_BAND_DESCRIPTOR,
        FallbackRung.MOVE_WORK,
        FallbackRung.FAIL_STEP,
    )
    assert [(e.csci_id, e.reason) for e in report.rejected] == [
        ("A", Reason.CAPABILITY_TIER_BELOW_REQUIRED),
        ("B", Reason.CAPABILITY_TIER_BELOW_REQUIRED),
        ("B", Reason.CONTEXT_WINDOW_TOO_SMALL),
    ]


def test_84_rung_5_fails_the_session_when_no_candidate_can_serve_it_at_admission() -> None:
    result = run(descriptor(step_id=None), [candidate("A", tier="small")])
    assert result.session_failed is True
    assert result.fallback_rung is FallbackRung.FAIL_SESSION
    assert result.failure is not None
    assert result.failure.rungs_attempted[-1] is FallbackRung.FAIL_SESSION


def test_84_rung_5_fails_the_session_when_its_budget_is_spent() -> None:
    spent = Budget(BudgetDimension.TIME, Scope.SESSION, 60.0, BudgetKind.CEILING, remaining=0.0)
    step = replace(descriptor(budgets=(spent,)), step_id=12)
    result = run(step, [candidate("A", tier="small")], trigger=Trigger.T1)
    assert result.session_failed is True


def test_p3_an_empty_candidate_set_goes_down_the_ladder_and_fails_the_step() -> None:
    result = run(descriptor(step_id=3), [], trigger=Trigger.T1)
    assert result.results == ()
    assert result.failure is not None
    assert result.failure.constraint is None
    assert result.failure.rejected == ()
    assert result.fallback_rung is FallbackRung.FAIL_STEP
