"""Expectations against what a stage saw: each unmet part named by its key."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from agents.gateway.description import DecisionExpectation, Expectation
from agents.gateway.expect import Observed, misses, named_keys
from controller.types import Json

AS = "ietf-cats-agent-selection"
W = "d.json: sessions[0].expect"


def record(**extra: Any) -> Json:
    return {
        "record-id": "2",
        "trigger": f"{AS}:t1-step-boundary",
        "outcome": f"{AS}:keep",
        "selected": "C",
        **extra,
    }


def element(handle: str, size: str, cls: str = "retrieved-material") -> Json:
    return {"reuse-key": handle, "element-class": f"{AS}:{cls}", "element-size": size}


ANNOUNCED = (
    {"reuse-key": "ctx", "element-class": f"{AS}:model-context-state", "element-size": "75"},
    {"reuse-key": "docs-core", "element-class": f"{AS}:retrieved-material", "element-size": "5"},
    {"reuse-key": "docs-extra", "element-class": f"{AS}:retrieved-material", "element-size": "45",
     "sufficient": False},
)  # fmt: skip

SESSION: Json = {
    "state": "running",
    "current-commitment": "cm-1",
    "commitment": [
        {"commitment-id": "cm-0", "csci-id": "B"},
        {"commitment-id": "cm-1", "csci-id": "C"},
    ],
    "descriptor": {
        "working-set": {
            "element": [element("rk-1", "75", "model-context-state"), element("rk-2", "5")]
        }
    },
    "accounting": {
        "budget": [{"dimension": f"{AS}:time", "consumed": "9000.000"}],
        "turn": [
            {
                "turn-id": 1,
                "budget": [],
                "step": [
                    {"step-id": 30, "budget": [{"dimension": f"{AS}:time", "consumed": "4600.000"}]}
                ],
            }
        ],
    },
}


def seen(*records: Json, **extra: Any) -> Observed:
    return Observed(records, SESSION, turn_id=1, step_id=30, announced=ANNOUNCED, **extra)


def test_what_holds_gives_no_miss() -> None:
    expect = Expectation(
        W,
        (
            DecisionExpectation(
                f"{W}.decisions[0]", "C", "keep", "t1-step-boundary", None, (), (), handoff=False
            ),
        ),
        commitment="C",
        working_set=("docs-core", "ctx"),
        consumed=(("time", Decimal(4600)),),
        state="running",
    )
    assert misses(expect, seen(record())) == []


def test_each_part_that_differs_is_named() -> None:
    excluded = (("A", "capability-tier-below-required"),)
    wanted = DecisionExpectation(
        f"{W}.decisions[0]",
        "B",
        "move",
        "t8-tail-event",
        "degrade-within-class",
        ("truncated-working-set",),
        excluded,
        handoff=True,
    )
    found = [str(m) for m in misses(Expectation(W, (wanted,)), seen(record()))]
    assert found == [
        f"{W}.decisions[0].selected: expected B, got C",
        f"{W}.decisions[0].outcome: expected move, got keep",
        f"{W}.decisions[0].trigger: expected t8-tail-event, got t1-step-boundary",
        f"{W}.decisions[0].fallback-rung: expected degrade-within-class, got None",
        f"{W}.decisions[0].degradation-applied: expected ['truncated-working-set'], got []",
        f"{W}.decisions[0].excluded: expected [('A', 'capability-tier-below-required')], got []",
        f"{W}.decisions[0].handoff: expected True, got False",
    ]


def test_a_missing_or_extra_decision_is_a_miss() -> None:
    expect = Expectation(W, (DecisionExpectation(f"{W}.decisions[0]", "C"),))
    assert [str(m) for m in misses(expect, seen())] == [
        f"{W}.decisions: expected 1 decisions, the C-PS recorded 0"
    ]
    none = Expectation(W, ())
    assert [str(m) for m in misses(none, seen(record()))] == [
        f"{W}.decisions: expected 0 decisions, the C-PS recorded 1"
    ]


def test_state_commitment_working_set_and_consumption_are_read_from_the_session() -> None:
    expect = Expectation(
        W,
        commitment="B",
        working_set=("ctx", "docs-core", "docs-extra"),
        consumed=(("time", Decimal(4000)), ("tokens", Decimal(1))),
        state="closed",
    )
    found = [str(m) for m in misses(expect, seen())]
    assert found == [
        f"{W}.commitment: expected B, got C",
        f"{W}.working-set: expected ['ctx', 'docs-core', 'docs-extra'], got ['ctx', 'docs-core']",
        f"{W}.state: expected closed, got running",
        f"{W}.consumed.time: expected 4000 consumed, the C-PS shows 4600.000",
        f"{W}.consumed.tokens: expected 1 consumed, the C-PS shows nothing",
    ]


def test_consumption_without_a_step_is_the_turns_or_the_sessions() -> None:
    expect = Expectation(W, consumed=(("time", Decimal(9000)),))
    assert misses(expect, Observed((), SESSION)) == []
    (miss,) = misses(expect, Observed((), SESSION, turn_id=1))
    assert "shows nothing" in miss.message


def test_acted_on_needs_an_overrun_notice_in_the_stage() -> None:
    expect = Expectation(W, acted_on=True)
    assert [m.message for m in misses(expect, seen())] == ["no tool call overran in this stage"]
    replies = (("invalidation-notice", {"acted-on": False}),)
    (miss,) = misses(expect, seen(replies=replies))
    assert miss.message == "expected True, got False"
    assert misses(expect, seen(replies=(("invalidation-notice", {"acted-on": True}),))) == []


def test_an_unknown_session_fails_what_asks_for_its_state() -> None:
    expect = Expectation(W, state="closed")
    assert [m.message for m in misses(expect, Observed((), None))] == [
        "the C-PS has no such session"
    ]
    assert misses(Expectation(W), Observed((), None)) == []


def test_scoped_handles_are_named_by_the_one_announced_element_they_agree_with() -> None:
    shown = [
        element("rk-9", "45") | {"sufficient": False},
        element("rk-8", "5"),
        element("rk-7", "999"),
    ]
    assert named_keys(shown, ANNOUNCED) == ["docs-core", "docs-extra", "rk-7"]
    twins = ({**ANNOUNCED[1], "reuse-key": "a"}, {**ANNOUNCED[1], "reuse-key": "b"})
    assert named_keys([element("rk-8", "5")], twins) == ["rk-8"]  # ambiguous: the handle
