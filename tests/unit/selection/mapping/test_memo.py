"""Screenings (memo): a decision that reuses kept P4/P5/P6 results equals a cold one, after any
change of the candidates, the descriptor, the position, the discounts or the time (8.1)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, cast

import pytest

from controller.selection.mapping import (
    Budget,
    Candidate,
    Commitment,
    Descriptor,
    Endpoint,
    EndpointCost,
    Evaluation,
    EvaluationRequest,
    Metadata,
    Objective,
    Policy,
    SelectionContext,
    SessionPosition,
    TransferWindow,
    evaluate,
)
from controller.selection.mapping.memo import Screenings, instants
from controller.selection.mapping.record import CandidateResult
from controller.selection.mapping.valuation import Reader
from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    BudgetKind,
    Confidence,
    Element,
    ElementClass,
    ObjectiveQuantity,
    Presence,
    ResidencyTier,
    Role,
    Scope,
    Trigger,
)
from controller.types import CommitmentId, CsciId, Prefix, SourceId
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
)

KEYS = ("k0", "k1", "k2", "k3", "k4", "k5")
PREFIX = Prefix("192.0.2.0/24")
_NO_READER = cast(Reader, None)


def _meta(rng: random.Random) -> Metadata:
    """Metadata that goes stale within the test's time span more often than not."""
    source = None if rng.random() < 0.02 else SourceId("c-sma-1")
    confidence = Confidence.ESTIMATED if rng.random() < 0.05 else Confidence.ASSERTED
    collected = None if rng.random() < 0.02 else NOW - rng.uniform(0.0, 8.0)
    return Metadata(collected, rng.choice((10.0, 30.0, 60.0, 300.0)), source, confidence)


def _state(rng: random.Random) -> dict[Any, Any]:
    found: dict[Any, Any] = {}
    for key in rng.sample(KEYS, rng.randint(0, 4)):
        presence = rng.choice(
            (Presence.PRESENT, Presence.PRESENT, Presence.UNKNOWN, Presence.ABSENT)
        )
        residency = rng.choice((ResidencyTier.ACCELERATOR_MEMORY, ResidencyTier.HOST_MEMORY))
        found.update(
            held(
                key,
                residency=residency,
                presence=presence,
                meta=_meta(rng),
                retrieval_cost=rng.choice((None, 0.05)),
                state_age=rng.choice((None, 1.0, 40.0)),
                may_not_move=rng.random() < 0.02,
            )
        )
    return found


def _candidate(rng: random.Random, index: int) -> Candidate:
    made = candidate(
        f"c{index}",
        region=rng.choice(("R", "R", "Q", None)),
        tier=rng.choice(("small", "capable", "large", None)),
        delay=rng.uniform(0.005, 0.2),
        wait=rng.uniform(0.02, 0.4),
        latency=rng.uniform(0.2, 0.9),
        prefill=rng.choice((None, 5_000.0, 10_000.0, 20_000.0, 40_000.0)),
        hbm_free=rng.uniform(10, 60) * GB,
        resident=rng.random() < 0.7,
        state=_state(rng),
        endpoints={
            PREFIX: EndpointCost(
                PREFIX,
                rng.choice((True, True, None, False)),
                dist(rng.uniform(0.01, 0.1), meta=_meta(rng)),
            )
        },
        trusted=rng.random() < 0.8,
        capability_meta=_meta(rng),
        computing=(dist(rng.uniform(0.02, 0.4), meta=_meta(rng)), dist(0.5, meta=_meta(rng))),
    )
    view = made.view
    if rng.random() < 0.3:
        start = NOW + rng.uniform(-5.0, 20.0)
        window = TransferWindow(_meta(rng), start, start + rng.uniform(1.0, 20.0))
        view = replace(view, transfer_window=window)
    return replace(made, view=view, enabled=rng.random() < 0.97)


def _descriptors() -> list[Descriptor]:
    working_set = (
        element("k0", ElementClass.MODEL_CONTEXT_STATE, 2 * GB, 4_000),
        element("k1", ElementClass.MODEL_CONTEXT_STATE, 1 * GB, 2_000, max_age=20.0),
        element("k2", ElementClass.RETRIEVED_MATERIAL, 2e6, 500, role=Role.CONSTRAINT),
        element("k3", ElementClass.TOOL_RESULT, 1e5, None, may_move=False),
        element("k4", ElementClass.RETRIEVED_MATERIAL, 2e6, 500),
        element("k5", ElementClass.TOOL_RESULT, 1e5, None),
    )
    tail = Objective(
        ObjectiveQuantity.STEP_COMPLETION_TIME, 1.2, 95.0, WINDOW, role=Role.CONSTRAINT
    )
    prefer = Objective(ObjectiveQuantity.STEP_COMPLETION_TIME, 0.9, 95.0, WINDOW)
    budget = Budget(BudgetDimension.TIME, Scope.STEP, 3.0, BudgetKind.CEILING)
    session = Budget(BudgetDimension.TIME, Scope.SESSION, 40.0, BudgetKind.CEILING)
    endpoint = Endpoint(PREFIX, "tool")
    return [
        descriptor(working_set=working_set[:3], objectives=(prefer,)),
        descriptor(
            working_set=working_set[:3] + working_set[4:],
            objectives=(tail,),
            budgets=(budget, session),
            freshness_need=((Element.QUEUE_DELAY, 25.0),),
            endpoints=(endpoint,),
        ),
        descriptor(working_set=working_set[3:], remaining_horizon=4, endpoints=(endpoint,)),
    ]


def _plain(ev: Evaluation) -> Evaluation:
    """The evaluation without the readers (objects that remember the instant they read at)."""
    results: list[CandidateResult] = []
    for result in ev.results:
        scored = result.scored
        if scored is not None:
            valuation = scored.valuation
            measures = replace(valuation.measures, reader=_NO_READER)
            scored = replace(scored, valuation=replace(valuation, measures=measures))
        results.append(replace(result, scored=scored))
    return replace(ev, results=tuple(results))


def _near(rng: random.Random, candidates: list[Candidate], now: float) -> float:
    """A time at or around one of the instants a candidate's comparisons switch at."""
    chosen = rng.choice(candidates)
    found = [t for t in instants(chosen.view, (20.0, 25.0)) if abs(t) != float("inf")]
    if not found:
        return now
    return rng.choice(found) + rng.choice((0.0, 1e-9, -1e-9, 1e-6, -1e-6, 2e-3, -2e-3))


def _change_candidates(rng: random.Random, state: dict[str, Any], roll: float) -> None:
    """A candidate gets a new value, an equal value, the order changes, one goes, one comes."""
    candidates: list[Candidate] = state["candidates"]
    index = rng.randrange(len(candidates))
    if roll < 0.4:
        made = _candidate(rng, state["next"])
        candidates[index] = replace(made, csci_id=candidates[index].csci_id)
    elif roll < 0.6:
        same = candidates[index]
        candidates[index] = replace(same, view=replace(same.view))  # equal, not identical
    elif roll < 0.75:
        rng.shuffle(candidates)
    elif roll < 0.85 and len(candidates) > 3:
        candidates.pop(index)
    else:
        candidates.append(_candidate(rng, state["next"]))
    state["next"] += 1


def _change(rng: random.Random, state: dict[str, Any]) -> None:
    """One random change: the time, the candidates, the descriptor, the position or the
    discounts; or nothing."""
    candidates: list[Candidate] = state["candidates"]
    roll = rng.random()
    if roll < 0.35:  # now and then back near the start, or nothing stays fresh
        state["now"] += rng.choice((0.0, 0.0, 1e-4, 0.3, 1.0, 4.0))
        if state["now"] > NOW + 30.0:
            state["now"] = NOW + rng.uniform(0.0, 5.0)
    elif roll < 0.45:
        state["now"] = _near(rng, candidates, state["now"])
    elif roll < 0.50:
        state["now"] -= rng.choice((0.5, 3.0))
    elif roll < 0.77:
        _change_candidates(rng, state, rng.random())
    elif roll < 0.83:
        state["descriptor"] = rng.choice(state["descriptors"])
    elif roll < 0.90:
        current = rng.choice([None, *(c.csci_id for c in candidates)])
        commitment = None
        if current is not None:
            commitment = Commitment(CommitmentId("c-1"), current, 1, NOW - 100.0, 600.0, 1)
        consumed = rng.choice((0.0, 10.0, 39.5))
        state["position"] = SessionPosition(commitment, session_consumed_time=consumed)
    elif roll < 0.95:
        ids = [c.csci_id for c in candidates]
        state["discounts"] = {i: rng.choice((0.1, 0.5)) for i in rng.sample(ids, 2)}


@pytest.mark.parametrize("seed", range(10))
def test_kept_results_equal_a_cold_evaluation_after_random_changes(seed: int) -> None:
    rng = random.Random(seed)
    descriptors = _descriptors()
    state: dict[str, Any] = {
        "candidates": [_candidate(rng, i) for i in range(24)],
        "next": 24,
        "now": NOW,
        "descriptors": descriptors,
        "descriptor": descriptors[1],
        "position": SessionPosition(),
        "discounts": {},
    }
    kept = Screenings()
    context = SelectionContext()
    reused = 0
    for _ in range(150):
        _change(rng, state)
        request = EvaluationRequest(state["descriptor"], state["position"], Trigger.T2)
        policy = Policy(context, TIERS, state["discounts"])
        hits = kept.hits
        warm = evaluate(request, state["candidates"], policy, state["now"], kept)
        cold = evaluate(request, state["candidates"], policy, state["now"])
        assert _plain(warm) == _plain(cold)
        reused += kept.hits - hits
    assert reused > 0  # the cache was used, not only filled
    assert kept.misses > 0  # and invalidated


def test_a_candidate_is_screened_again_once_a_value_it_used_goes_stale() -> None:
    fresh = candidate("A")
    kept = Screenings()
    request = EvaluationRequest(descriptor())
    policy = Policy(SelectionContext(), TIERS)
    first = evaluate(request, [fresh], policy, NOW, kept)
    again = evaluate(request, [fresh], policy, NOW + 1.0, kept)
    assert (first.eligible, again.eligible, kept.hits) == ((CsciId("A"),), (CsciId("A"),), 1)
    stale = evaluate(request, [fresh], policy, NOW + 31.0, kept)  # bound 30 s: now stale
    assert stale.eligible == ()
    assert kept.hits == 1  # not taken from the kept result
