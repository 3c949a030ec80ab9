"""P5 per-dimension valuation (M3, M17, M33, M47) and P6 combination (M7, M21, Section 14)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from controller.selection.mapping import (
    Band,
    Distribution,
    Endpoint,
    EndpointCost,
    EvaluationRequest,
    Lexicographic,
    Objective,
    Policy,
    SelectionContext,
    SessionPosition,
    Weighted,
    evaluate,
)
from controller.selection.mapping.context import Commitment
from controller.selection.mapping.vocabulary import (
    Confidence,
    Dimension,
    ElementClass,
    FallbackRung,
    ObjectiveQuantity,
    Reason,
    Role,
)
from controller.types import CommitmentId, CsciId, Prefix
from tests.unit.selection.mapping.builders import (
    GB,
    NOW,
    TIERS,
    WINDOW,
    candidate,
    descriptor,
    dist,
    element,
    held,
    meta,
    run,
)


def _dist(values: tuple[tuple[float, float], ...]) -> Distribution:
    return Distribution(values, meta(), WINDOW)


SEARCH, FETCH, CALC = Prefix("192.0.2.0/24"), Prefix("198.51.100.0/24"), Prefix("203.0.113.0/24")


def test_m3_forwarding_counts_every_endpoint_and_the_slowest_parallel_call_bounds_the_turn() -> (
    None
):
    step = descriptor(
        endpoints=(
            Endpoint(SEARCH, expected_calls=2),
            Endpoint(FETCH, parallel=True),
            Endpoint(CALC, parallel=True, role=Role.PREFERENCE),
        )
    )
    costs = {
        SEARCH: EndpointCost(SEARCH, reachable=True, cost=dist(0.020)),
        FETCH: EndpointCost(FETCH, reachable=True, cost=dist(0.100)),
        CALC: EndpointCost(CALC, reachable=True, cost=dist(0.300)),
    }
    result = run(step, [candidate("A", delay=0.010, endpoints=costs)])
    scored = result.result("A").scored
    assert scored is not None
    assert scored.valuation.forwarding == pytest.approx(0.010 + 2 * 0.020 + 0.300)
    assert scored.valuation.slowest_call == 0.300


def test_m17_m33_computing_is_valued_at_the_stated_percentile_over_the_stated_window() -> None:
    p99 = Objective(ObjectiveQuantity.STEP_COMPLETION_TIME, 5.0, 99.0, WINDOW)
    with_p99 = (
        _dist(((95.0, 0.1), (99.0, 0.4))),
        _dist(((95.0, 0.5), (99.0, 1.5))),
    )
    result = run(descriptor(objectives=(p99,)), [candidate("A", computing=with_p99)])
    scored = result.result("A").scored
    assert scored is not None
    assert scored.valuation.computing == pytest.approx(1.9)


def test_m17_the_tail_tolerance_raises_the_percentile_the_objective_is_compared_at() -> None:
    p95 = Objective(ObjectiveQuantity.STEP_COMPLETION_TIME, 5.0, 95.0, WINDOW)
    with_p99 = (
        _dist(((95.0, 0.1), (99.0, 0.4))),
        _dist(((95.0, 0.5), (99.0, 1.5))),
    )
    lenient = run(
        descriptor(objectives=(p95,), tail_tolerance=0.05), [candidate("A", computing=with_p99)]
    )
    strict = run(
        descriptor(objectives=(p95,), tail_tolerance=0.01), [candidate("A", computing=with_p99)]
    )
    assert [
        r.scored.valuation.computing for r in (lenient.result("A"), strict.result("A")) if r.scored
    ] == [pytest.approx(0.6), pytest.approx(1.9)]


def test_p5_a_dimension_that_cannot_be_valued_is_unknown_and_ranks_last() -> None:
    no_latency = candidate("A", delay=0.001, computing=(dist(0.1), None))
    result = run(descriptor(), [no_latency, candidate("B", delay=0.9)])
    a = result.result("A").scored
    assert a is not None
    assert a.valuation.computing is None
    assert a.suitability is None
    assert result.result("A").rank == 2
    assert result.selected == "B"


def test_m7_weighted_and_lexicographic_rules_can_choose_differently() -> None:
    near = candidate("N", delay=0.1, wait=0.5, latency=0.5)
    fast = candidate("F", delay=0.5, wait=0.1, latency=0.1)
    weighted = run(descriptor(), [near, fast], SelectionContext(combination=Weighted()))
    forwarding_first = SelectionContext(
        combination=Lexicographic((Dimension.FORWARDING, Dimension.COMPUTING, Dimension.STORAGE))
    )
    lexicographic = run(descriptor(), [near, fast], forwarding_first)
    assert weighted.selected == "F"
    assert weighted.suitability == pytest.approx(-0.7)
    assert lexicographic.selected == "N"
    assert lexicographic.suitability == pytest.approx(-1.1)


def test_m7_weights_change_the_choice() -> None:
    near = candidate("N", delay=0.1, wait=0.5, latency=0.5)
    fast = candidate("F", delay=0.5, wait=0.1, latency=0.1)
    forwarding_heavy = Weighted(
        ((Dimension.FORWARDING, 5.0), (Dimension.COMPUTING, 1.0), (Dimension.STORAGE, 1.0))
    )
    result = run(descriptor(), [near, fast], SelectionContext(combination=forwarding_heavy))
    assert result.selected == "N"
    assert result.suitability == pytest.approx(-(5 * 0.1 + 1.0))


def test_p6_the_objective_is_a_bound_on_the_outcome_not_a_term_in_the_sum() -> None:
    """X has the better weighted suitability but misses the 1.0 s objective; Y meets it."""
    objective = Objective(ObjectiveQuantity.STEP_COMPLETION_TIME, 1.0, 95.0, WINDOW)
    light_forwarding = Weighted(
        ((Dimension.FORWARDING, 0.1), (Dimension.COMPUTING, 1.0), (Dimension.STORAGE, 1.0))
    )
    x = candidate("X", delay=1.5, wait=0.1, latency=0.1)
    y = candidate("Y", delay=0.3, wait=0.3, latency=0.3)
    result = run(
        descriptor(objectives=(objective,)),
        [x, y],
        SelectionContext(combination=light_forwarding, bands={None: Band(1.0)}),
    )
    sx, sy = result.result("X").scored, result.result("Y").scored
    assert sx is not None
    assert sy is not None
    assert sx.suitability == pytest.approx(-0.35)
    assert sy.suitability == pytest.approx(-0.63)
    assert sx.band == sy.band == -1
    assert (sx.meets_objective, sy.meets_objective) == (False, True)
    assert result.selected == "Y"


def test_m21_banding_never_hides_a_constraint_violation() -> None:
    tail = Objective(
        ObjectiveQuantity.STEP_COMPLETION_TIME, 0.6, 95.0, WINDOW, role=Role.CONSTRAINT
    )
    breaching = candidate("X", delay=0.001, wait=0.11, latency=0.5)
    meeting = candidate("Y", delay=0.02, wait=0.1, latency=0.5)
    result = run(
        descriptor(objectives=(tail,)),
        [breaching, meeting],
        SelectionContext(bands={None: Band(10.0)}),
    )
    assert [e.reason for e in result.result("X").exclusions] == [Reason.TAIL_OBJECTIVE_BREACHED]
    assert result.selected == "Y"


def test_m21_no_candidate_meets_the_preference_so_it_is_re_banded_rung_1() -> None:
    objective = Objective(ObjectiveQuantity.STEP_COMPLETION_TIME, 0.1, 95.0, WINDOW)
    result = run(descriptor(objectives=(objective,)), [candidate("A")])
    assert result.selected == "A"
    assert result.fallback_rung is FallbackRung.RE_BAND_DESCRIPTOR


def test_8_3_a_value_fluctuating_inside_a_band_keeps_the_commitment() -> None:
    current = candidate("C", delay=0.04)
    rival = candidate("R", delay=0.01)
    commitment = Commitment(CommitmentId("c1"), CsciId("C"), 1, NOW - 10)
    context = SelectionContext(bands={None: Band(0.5)})
    result = run(descriptor(), [rival, current], context, SessionPosition(commitment))
    assert result.result("C").rank == 1
    assert result.selected == "C"


def test_section14_an_untrusted_dimension_cannot_dominate_the_combination() -> None:
    claims = candidate("U", delay=0.05, wait=0.0, latency=0.01, trusted=False)
    honest = candidate("T", delay=0.04, wait=0.2, latency=0.3)
    result = run(descriptor(), [claims, honest])
    untrusted = result.result("U").scored
    assert untrusted is not None
    assert untrusted.capped == (Dimension.COMPUTING,)
    assert untrusted.times[1] == pytest.approx(0.5)
    assert result.selected == "T"


def test_section14_a_discounted_source_moves_towards_the_worst_of_the_field() -> None:
    a = candidate("A", wait=0.0, latency=0.1)
    b = candidate("B", delay=0.005, wait=0.4, latency=0.59)
    policy = Policy(SelectionContext(), TIERS, {CsciId("A"): 1.0})
    result = evaluate(EvaluationRequest(descriptor()), [a, b], policy, NOW)
    scored = result.result("A").scored
    assert scored is not None
    assert scored.times[1] == pytest.approx(0.99)
    assert result.selected == "B"


def test_m47_state_cost_is_paid_once_and_spread_over_the_horizon() -> None:
    ctx = element("ctx", ElementClass.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000)
    step = descriptor(working_set=(ctx,), remaining_horizon=100)
    context = SelectionContext(look_ahead_horizon=10)
    result = run(
        step, [candidate("B", delay=0.3), candidate("C", delay=0.8, state=held("ctx"))], context
    )
    b = result.result("B").scored
    assert b is not None
    assert b.once == pytest.approx(3.008)
    assert b.recurring == pytest.approx(0.3 + 0.6)
    assert b.times[2] == pytest.approx(0.3008)
    assert b.step_time == pytest.approx(0.9 + 3.008)
    assert result.selected == "B"


def test_7_5_a_view_summarized_fresh_values_exactly_as_one_checked_value_by_value() -> None:
    """The fresh-view shortcut (metadata summarized when the view is built) changes nothing."""
    ctx = element("ctx", ElementClass.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000)
    costs = {SEARCH: EndpointCost(SEARCH, reachable=True, cost=dist(0.020))}
    fast = candidate("F", state=held("ctx"), endpoints=costs)
    view = fast.view
    assert view.artifact is not None
    estimated = replace(view.artifact, meta=meta(confidence=Confidence.ESTIMATED))
    slow = replace(fast, csci_id=CsciId("S"), view=replace(view, artifact=estimated))
    assert slow.view.fresh(NOW, None) is False
    assert fast.view.fresh(NOW, None) is True
    step = descriptor(working_set=(ctx,), endpoints=(Endpoint(SEARCH),))
    result = run(step, [fast, slow])
    f, s = result.result("F").scored, result.result("S").scored
    assert f is not None
    assert s is not None
    assert (f.times, f.step_time, f.suitability) == (s.times, s.step_time, s.suitability)
