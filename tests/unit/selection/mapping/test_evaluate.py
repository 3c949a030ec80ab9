"""evaluate (MSG-8 -> MSG-9), the decision record, decision points and triggers
(M8, M9, M14, M18, M29, M39, M45, M48, 8.2, 8.3, 13)."""

from __future__ import annotations

from controller.selection.mapping import (
    INVENTORY,
    Commitment,
    DecisionRate,
    Effect,
    Invalidation,
    decision_point,
    needs_decision,
)
from controller.selection.mapping.points import PHASES
from controller.selection.mapping.values import Unit
from controller.selection.mapping.vocabulary import (
    Confidence,
    DecisionPoint,
    Dimension,
    Element,
    ElementClass,
    InvalidationCondition,
    Outcome,
    Presence,
    Role,
    Trigger,
    ValueCondition,
)
from controller.types import CommitmentId, CsciId
from tests.unit.selection.mapping.builders import (
    GB,
    NOW,
    candidate,
    descriptor,
    element,
    held,
    meta,
    run,
)

DP, T = DecisionPoint, Trigger


def test_m18_exclusions_and_valuations_are_kept_apart_in_the_record() -> None:
    ctx = element("ctx", ElementClass.MODEL_CONTEXT_STATE, 1 * GB, 10_000)
    doubtful = candidate("B", state=held("ctx", presence=Presence.UNKNOWN))
    stale_tier = candidate("S", capability_meta=meta(age=90.0))
    result = run(
        descriptor(working_set=(ctx,)), [doubtful, stale_tier, candidate("A", tier="small")]
    )
    assert result.eligible == ("B",)
    b, s = result.result("B"), result.result("S")
    assert (b.exclusions, b.scored is not None) == ((), True)
    assert (s.scored, len(s.exclusions)) == (None, 1)
    assert [(q.csci_id, q.element, q.condition, q.used_in, q.effect) for q in result.qualified] == [
        (
            "B",
            Element.PRESENCE,
            ValueCondition.UNKNOWN,
            Role.PREFERENCE,
            Effect.PREFERENCE_REPORTED,
        ),
        (
            "S",
            Element.CAPABILITY_TIER,
            ValueCondition.STALE,
            Role.CONSTRAINT,
            Effect.CONSTRAINT_NOT_SATISFIED,
        ),
    ]


def test_m8_m39_the_record_keeps_the_input_and_the_outcome_for_the_session() -> None:
    step = descriptor(step_id=4, turn_id=2)
    result = run(step, [candidate("A"), candidate("B", delay=0.3)], trigger=T.T1)
    record = result.record(
        17,
        commitment_id=CommitmentId("c-4"),
        invalidation=Invalidation(InvalidationCondition.VALUE_EXPIRED, acted_on=True),
    )
    assert (record.record_id, record.created_at, record.outcome, record.selected) == (
        17,
        NOW,
        Outcome.MOVE,
        "A",
    )
    evaluation = record.evaluation
    assert (evaluation.decision_point, evaluation.trigger) == (DP.DP3, T.T1)
    assert (evaluation.turn_id, evaluation.step_id) == (2, 4)
    assert evaluation.descriptor is step
    assert [r.candidate.view for r in evaluation.results] == [
        candidate("A").view,
        candidate("B", delay=0.3).view,
    ]
    assert [r.rank for r in evaluation.results] == [1, 2]


def test_m14_the_descriptor_is_revised_between_steps_with_the_accumulated_working_set() -> None:
    ctx = element("ctx", ElementClass.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000)
    holder = candidate("C", delay=0.5, state=held("ctx"))
    other = candidate("B", delay=0.1)
    first = run(descriptor(step_id=1), [holder, other])
    later = run(descriptor(step_id=2).with_working_set((ctx,)), [holder, other])
    assert (first.selected, later.selected) == ("B", "C")


def test_8_2_every_trigger_raises_its_decision_point() -> None:
    assert decision_point(None) is DP.DP1
    assert [decision_point(t) for t in Trigger] == [
        DP.DP3,
        DP.DP2,
        DP.DP4,
        DP.DP5,
        DP.DP6,
        DP.DP7,
        DP.DP7,
        DP.DP8,
        DP.DP9,
        DP.DP10,
    ]
    assert PHASES[DP.DP4] == ("P4", "P5")


def test_m9_m29_t1_decides_only_when_the_commitment_does_not_cover_the_step() -> None:
    covering = Commitment(CommitmentId("c1"), CsciId("A"), 3, NOW - 10, lifetime=60.0, last_step=5)
    assert needs_decision(T.T1, covering, 4, NOW) is False
    assert needs_decision(T.T1, covering, 6, NOW) is True
    assert needs_decision(T.T1, covering, 4, NOW + 100) is True
    assert needs_decision(T.T4, covering, 4, NOW) is True
    assert needs_decision(T.T7, covering, 4, NOW) is True


def test_section13_the_decision_rate_of_a_session_is_bounded_but_not_for_urgent_triggers() -> None:
    rate = DecisionRate()
    for offset in range(3):
        admitted, rate = rate.admit(NOW + offset, 3, T.T1)
        assert admitted is True
    refused, after = rate.admit(NOW + 3, 3, T.T5)
    assert (refused, after.times) == (False, (NOW, NOW + 1, NOW + 2))
    urgent, _ = rate.admit(NOW + 3, 3, T.T8)
    assert urgent is True
    later, _ = rate.admit(NOW + 61, 3, T.T5)
    assert later is True


def test_m45_m48_every_resource_states_its_dimensions_unit_and_observer() -> None:
    assert INVENTORY["accelerator-memory-free"].dimensions == (
        Dimension.COMPUTING,
        Dimension.STORAGE,
    )
    assert INVENTORY["accelerator-memory-free"].unit is Unit.BYTES
    assert INVENTORY["path-egress-capacity"].observed_by == "c-nma"
    assert INVENTORY["prefill-and-decode-rate"].unit is Unit.TOKENS_PER_SECOND
    assert len(INVENTORY) == 16


def test_m20_an_estimate_may_satisfy_a_constraint_and_is_reported_as_such() -> None:
    guessed = candidate("A", capability_meta=meta(confidence=Confidence.ESTIMATED))
    result = run(descriptor(), [guessed])
    assert result.selected == "A"
    assert [(q.element, q.condition, q.used_in, q.effect) for q in result.qualified] == [
        (
            Element.CAPABILITY_TIER,
            ValueCondition.ESTIMATED,
            Role.CONSTRAINT,
            Effect.CONSTRAINT_SATISFIED_ON_ESTIMATE,
        )
    ]
