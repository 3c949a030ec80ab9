"""The worked examples of the agent draft with the draft's numbers: 8.4, 6.8 step 30, 8.4 step 30.

Numbers the draft leaves open are chosen here and named: computing at B and C is equal,
the KV cache of the 8.4 example is 6,000 tokens at 10,000 tokens/s (the draft's 0.6 s).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from controller.selection.mapping import (
    Alternative,
    Candidate,
    Descriptor,
    Locality,
    Objective,
    Policy,
    SelectionContext,
    SessionPosition,
    Stability,
    StepProgress,
    on_tail_event,
    recompute_time,
    state_cost,
    state_fits,
    transfer_time,
)
from controller.selection.mapping.context import Commitment
from controller.selection.mapping.vocabulary import (
    DegradationClass,
    Element,
    ElementClass,
    FallbackRung,
    ObjectiveQuantity,
    Outcome,
    Reason,
    ResidencyTier,
    TailAction,
    Trigger,
)
from controller.types import CommitmentId, CsciId, Prefix, ReuseKey
from tests.unit.selection.mapping.builders import (
    GB,
    NOW,
    TIERS,
    WINDOW,
    R,
    candidate,
    descriptor,
    element,
    held,
    run,
)

EC = ElementClass
KV = element("kv", EC.MODEL_CONTEXT_STATE, 0.33 * GB, 6_000)
DOCS = element("docs", EC.RETRIEVED_MATERIAL, 2e6, 1_000)
TWO_SECONDS = Objective(ObjectiveQuantity.STEP_COMPLETION_TIME, 2.0, 95.0, WINDOW)


def _example_84(c_forwarding: float) -> tuple[str | None, float, float]:
    """8.4: A near but small; B holds documents, KV absent (0.6 s to recompute); C holds all."""
    step = descriptor(
        working_set=(KV, DOCS),
        objectives=(TWO_SECONDS,),
        locality=(Locality(EC.MODEL_CONTEXT_STATE, frozenset({R})),),
    )
    a = candidate("A", tier="small", delay=0.002, state=held("kv", "docs"))
    b = candidate("B", delay=0.050, bw=0.25 * GB, state=held("docs"))
    c = candidate("C", delay=0.050 + c_forwarding, state=held("kv", "docs"))
    result = run(step, [a, b, c])
    exclusion = result.result("A").exclusions
    assert [(e.reason, e.constraint.value) for e in exclusion] == [
        (Reason.CAPABILITY_TIER_BELOW_REQUIRED, "capability-tier")
    ]
    b_storage = result.result("B").scored
    assert b_storage is not None
    return result.selected, b_storage.valuation.storage or 0.0, result.suitability or 0.0


def test_84_a_excluded_and_c_preferred_while_its_extra_forwarding_is_below_06_s() -> None:
    selected, b_state_cost, suitability = _example_84(c_forwarding=0.5)
    assert b_state_cost == pytest.approx(0.6, abs=1e-12)
    assert selected == "C"
    assert suitability == pytest.approx(-(0.55 + 0.6), abs=1e-9)


def test_84_b_preferred_once_c_forwarding_exceeds_the_06_s_recompute_saving() -> None:
    selected, _, suitability = _example_84(c_forwarding=0.7)
    assert selected == "B"
    assert suitability == pytest.approx(-(0.05 + 0.6 + 0.6), abs=1e-9)


def test_84_the_line_lies_at_06_s_exactly() -> None:
    assert _example_84(c_forwarding=0.599)[0] == "C"
    assert _example_84(c_forwarding=0.601)[0] == "B"


CTX = element("ctx", EC.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000)
DOC_SET = element("docs", EC.RETRIEVED_MATERIAL, 50e6, 2_000)


def test_68_literal_arithmetic_of_the_draft_is_false() -> None:
    """'state_fits is true (7.5 <= 20 - 15.23)': 20 - 15.23 = 4.77, so the relation as
    written is false; the example holds only because C already holds the state."""
    assert pytest.approx(4.77) == 20 - 15.23
    assert state_fits(7.5 * GB, 20 * GB, 15.23 * GB) is False


def test_68_transfer_about_3_s_against_recompute_about_128_s_at_b() -> None:
    transfer = transfer_time(7.5 * GB, 2.5 * GB, 0.008)
    recompute = recompute_time(128_000, 1_000)
    assert transfer == pytest.approx(3.008, abs=1e-12)
    assert recompute == 128.0
    assert state_cost(transfer, recompute) == transfer


def _candidates_68(b_delay: float, c_delay: float = 0.8) -> list[Candidate]:
    c = candidate(
        "C", delay=c_delay, hbm_free=20 * GB, weights=15.23 * GB, state=held("ctx", "docs")
    )
    b = candidate(
        "B",
        delay=b_delay,
        bw=2.5 * GB,
        rtt=0.008,
        prefill=1_000.0,
        hbm_free=24 * GB,
        state=held("docs"),
    )
    return [b, c]


def _position_at_c() -> SessionPosition:
    commitment = Commitment(CommitmentId("c-29"), CsciId("C"), 29, NOW - 300)
    return SessionPosition(commitment, last_move_at=NOW - 3_600)


CONTEXT_68 = SelectionContext(
    Stability(min_interval=60.0, min_improvement=0.05), look_ahead_horizon=10
)


def test_68_state_fits_at_c_because_c_already_holds_it_and_b_costs_3_s() -> None:
    step = descriptor(step_id=30, working_set=(CTX, DOC_SET), remaining_horizon=40)
    result = run(
        step, _candidates_68(b_delay=0.6), CONTEXT_68, _position_at_c(), trigger=Trigger.T1
    )
    c, b = result.result("C"), result.result("B")
    assert c.eligible
    assert b.eligible
    assert c.scored is not None
    assert b.scored is not None
    assert c.scored.valuation.measures.storage.needed_accelerator_bytes == 0
    assert c.scored.valuation.storage == 0.0
    storage_b = b.scored.valuation.measures.storage
    assert storage_b.transfer_time == pytest.approx(3.008, abs=1e-12)
    assert storage_b.recompute_time == 128.0
    assert storage_b.state_cost == pytest.approx(3.008, abs=1e-12)


def test_68_c_excluded_on_memory_if_state_and_weights_were_still_to_be_placed() -> None:
    """Read literally (7.5 GB to place beside 15.23 GB of weights in 20 GB), C does not fit."""
    step = descriptor(step_id=30, working_set=(CTX,))
    c = candidate(
        "C",
        hbm_free=20 * GB,
        resident=False,
        state=held("ctx", residency=ResidencyTier.HOST_MEMORY, retrieval_cost=1.0),
    )
    result = run(step, [c])
    assert [(e.reason, e.required, e.observed) for e in result.result("C").exclusions] == [
        (Reason.MEMORY_DOES_NOT_FIT, "7.50 GB state", "4.77 GB free")
    ]


def test_68_b_does_not_win_when_its_path_gain_over_the_horizon_is_below_the_transfer() -> None:
    """B is 0.2 s per step better on its p95 path: 2.0 s over 10 steps < 3.008 s: keep C."""
    step = descriptor(step_id=30, working_set=(CTX, DOC_SET), remaining_horizon=40)
    result = run(
        step, _candidates_68(b_delay=0.6), CONTEXT_68, _position_at_c(), trigger=Trigger.T1
    )
    assert result.outcome is Outcome.KEEP
    assert result.selected == "C"


def test_68_b_wins_when_its_path_gain_over_the_horizon_beats_transfer_and_stability() -> None:
    """B 0.5 s per step better: 5.0 s over 10 steps > 3.008 s, improvement 0.199 s >= 0.05."""
    step = descriptor(step_id=30, working_set=(CTX, DOC_SET), remaining_horizon=40)
    result = run(
        step, _candidates_68(b_delay=0.3), CONTEXT_68, _position_at_c(), trigger=Trigger.T1
    )
    assert result.outcome is Outcome.MOVE
    assert result.selected == "B"
    assert result.change is not None
    assert result.change.cost == pytest.approx(3.008, abs=1e-9)
    assert result.change.gain_time == pytest.approx(5.0, abs=1e-9)
    assert result.stability is not None
    assert result.stability.gain_covers_cost is True
    assert result.stability.min_interval_met is True


PLAN = element("plan", EC.PLAN_SCRATCH_STATE, 1e6, 4_000)
CORE_DOCS = element("docs-core", EC.RETRIEVED_MATERIAL, 5e6, 1_000)
EXTRA_DOCS = element("docs-extra", EC.RETRIEVED_MATERIAL, 45e6, 9_000, sufficient=False)
RETRIEVAL = Prefix("192.0.2.0/24")


def _episode() -> tuple[Descriptor, list[Candidate]]:
    step = descriptor(
        step_id=30,
        working_set=(CTX, CORE_DOCS, EXTRA_DOCS, PLAN),
        remaining_horizon=40,
        degradation=(DegradationClass.TRUNCATED_WORKING_SET,),
    )
    c = candidate(
        "C",
        delay=0.4,
        wait=0.25,
        free_capacity=0.2,
        hbm_free=20 * GB,
        state=held("ctx", "docs-core", "docs-extra", "plan"),
    )
    b = candidate(
        "B",
        delay=0.4,
        wait=0.10,
        free_capacity=0.6,
        bw=2.5 * GB,
        prefill=1_000.0,
        hbm_free=24 * GB,
        state=held("docs-core", "docs-extra"),
    )
    return step, [b, c]


def test_84_step30_c_kept_although_b_reports_more_free_capacity() -> None:
    step, candidates = _episode()
    result = run(step, candidates, CONTEXT_68, _position_at_c(), trigger=Trigger.T1)
    b = result.result("B").scored
    assert b is not None
    assert b.valuation.computing == pytest.approx(0.60, abs=1e-12)
    assert b.valuation.measures.storage.state_cost == pytest.approx(7.501 / 2.5 + 0.008)
    c = result.result("C").scored
    assert c is not None
    assert c.valuation.computing == pytest.approx(0.75, abs=1e-12)
    assert result.outcome is Outcome.KEEP
    assert result.selected == "C"
    change = result.change
    assert change is not None
    assert (change.from_csci, change.to_csci) == ("C", "B")
    assert change.gain_time == pytest.approx(1.5)
    assert change.cost == pytest.approx(3.0084)


def test_84_step30_tail_event_narrows_the_retrieval_set_and_does_not_migrate() -> None:
    step, _ = _episode()
    progress = StepProgress(elapsed=4.0, expected=0.1, endpoint=RETRIEVAL, remaining=2.0)
    policy = Policy(SelectionContext(tail_detection_factor=10.0), TIERS)
    alternative = Alternative(CsciId("B"), change_cost=3.0084, step_time=1.0)
    decision = on_tail_event(
        progress, step, policy, alternative=alternative, constraint_violated=True
    )
    assert decision.tail is True
    assert decision.action is TailAction.DEGRADE
    assert decision.rung is FallbackRung.DEGRADE_WITHIN_CLASS
    assert decision.degradation_applied == (DegradationClass.TRUNCATED_WORKING_SET,)
    assert decision.migrate_to is None
    assert decision.descriptor is not None
    assert [e.reuse_key for e in decision.descriptor.working_set] == [
        ReuseKey("ctx"),
        ReuseKey("docs-core"),
        ReuseKey("plan"),
    ]


def test_84_step30_without_the_reduction_moving_costs_more_than_it_removes_so_it_fails() -> None:
    step, candidates = _episode()
    strict = replace(step, degradation=())
    elsewhere = run(strict, [candidate("A", tier="small"), *candidates], CONTEXT_68)
    b = elsewhere.result("B").scored
    assert b is not None
    assert b.once == pytest.approx(3.0084)
    alternative = Alternative(CsciId("B"), b.once, b.recurring, elsewhere.exclusions)
    progress = StepProgress(elapsed=4.0, expected=0.1, endpoint=RETRIEVAL, remaining=2.0)
    policy = Policy(SelectionContext(tail_detection_factor=10.0), TIERS)
    decision = on_tail_event(
        progress, strict, policy, alternative=alternative, constraint_violated=True
    )
    assert decision.action is TailAction.FAIL_STEP
    assert decision.migrate_to is None
    report = decision.failure
    assert report is not None
    assert (report.constraint, report.trigger) == (Element.OBJECTIVE, Trigger.T8)
    assert report.rungs_attempted == (
        FallbackRung.DEGRADE_WITHIN_CLASS,
        FallbackRung.MOVE_WORK,
        FallbackRung.FAIL_STEP,
    )
    assert [(e.csci_id, e.reason) for e in report.rejected] == [
        ("A", Reason.CAPABILITY_TIER_BELOW_REQUIRED)
    ]
