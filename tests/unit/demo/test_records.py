"""Stage G's reading of an agent session: the tables and every way a session differs from the
step-30 episode (a session as the C-PS returned it for the episode, trimmed)."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from controller.demo import records
from controller.types import Json

AS = "ietf-cats-agent-selection"
B, C = "127.3.67.3:40001", "127.3.67.4:40002"
NAMES = {B: "B", C: "C"}


def element(key: str, cls: str, size: int, **extra: Any) -> Json:
    return {"reuse-key": key, "element-class": f"{AS}:{cls}", "element-size": str(size), **extra}


ANNOUNCED = [
    element("ctx", "model-context-state", 7_500_000_000),
    element("docs-core", "retrieved-material", 5_000_000),
    element("docs-extra", "retrieved-material", 45_000_000, sufficient=False),
    element("plan", "plan-scratch-state", 1_000_000),
]


def candidates() -> list[Json]:
    b = {
        "forwarding": {"expected-time": "400.0"},
        "computing": {"expected-time": "600.0"},
        "state-bytes": "7500000000",
        "transfer-time": "3008.4",
        "recompute-time": "132000.0",
        "state-cost": "3008.4",
        "suitability": "-1.30084",
    }
    c = {
        "forwarding": {"expected-time": "400.0"},
        "computing": {"expected-time": "750.0"},
        "state-bytes": "0",
        "transfer-time": "0.0",
        "recompute-time": "0.0",
        "state-cost": "0.0",
        "suitability": "-1.15",
    }
    return [{"csci-id": B, "valuation": b}, {"csci-id": C, "valuation": c}]


def session() -> Json:
    change = {
        "from": C,
        "to": B,
        "cost": "3008.4",
        "gain": "-1.5084",
        "gain-time": "1.5",
        "horizon-steps": 10,
    }
    common = {"eligible": [B, C], "selected": C, "candidate": candidates(), "turn-id": 1}
    return {
        "session-id": "s-episode",
        "state": "running",
        "current-commitment": "cm-s-episode-1",
        "descriptor": {"working-set": {"element": [ANNOUNCED[0], ANNOUNCED[1], ANNOUNCED[3]]}},
        "commitment": [
            {
                "commitment-id": "cm-s-episode-1",
                "csci-id": C,
                "steps": {"first": 29, "last": 30},
                "state": "active",
            }
        ],
        "accounting": {
            "turn": [
                {
                    "turn-id": 1,
                    "step": [
                        {
                            "step-id": 30,
                            "budget": [
                                {"dimension": f"{AS}:time", "consumed": "4600.0"},
                                {"dimension": f"{AS}:tokens", "consumed": "2400.0"},
                            ],
                        }
                    ],
                }
            ]
        },
        "decision-record": [
            {
                **common,
                "record-id": "1",
                "step-id": 29,
                "decision-point": f"{AS}:dp1-session-admission",
                "outcome": f"{AS}:move",
                "change": {"to": C, "cost": "0.0"},
            },
            {
                **common,
                "record-id": "2",
                "step-id": 30,
                "trigger": f"{AS}:t1-step-boundary",
                "outcome": f"{AS}:keep",
                "change": change,
                "stability": {"applied": True, "step-in-flight": False},
            },
            {
                **common,
                "record-id": "3",
                "step-id": 30,
                "trigger": f"{AS}:t8-tail-event",
                "outcome": f"{AS}:keep",
                "change": change,
                "stability": {"applied": False, "step-in-flight": True},
                "fallback-rung": f"{AS}:degrade-within-class",
                "degradation-applied": [f"{AS}:truncated-working-set"],
                "invalidation": {"condition": f"{AS}:step-overrun", "acted-on": True},
            },
        ],
    }


def record(found: Json, name: str) -> Json:
    chosen = records.record_at(found, name)
    assert chosen is not None
    return chosen


def test_the_episode_as_the_c_ps_returned_it_has_no_problem() -> None:
    found = session()
    assert records.admission_problems(found, C) == []
    assert records.boundary_problems(record(found, "t1-step-boundary"), C, B) == []
    assert records.tail_problems(record(found, "t8-tail-event"), found, C, ANNOUNCED) == []


def test_the_decision_table_names_candidates_and_gives_the_reasons() -> None:
    lines = records.decision_table(session()["decision-record"], NAMES)
    assert lines[0].split(" | ")[0].strip() == "#"
    assert "| t1-step-boundary      | 30   | keep    | C         | eligible B, C" in lines[4]
    text = "\n".join(lines)
    assert "moving C -> B costs 3008.4 ms for 1.5 s gained over 10 steps (net -1.5084 s)" in text
    assert "held by the stability rules (8.3)" in text
    assert "degradation applied: truncated-working-set" in text
    assert "state cost B 3008.4 ms, C 0 ms" in text
    assert B not in text  # the draft's names, not the locators


def test_the_valuation_table_shows_transfer_against_recompute() -> None:
    lines = records.valuation_table(record(session(), "t1-step-boundary"), {B: 0.6, C: 0.2}, NAMES)
    (b_row,) = [line for line in lines if line.strip().startswith("B ")]
    assert [cell.strip() for cell in b_row.split("|")] == [
        "B",
        "0.6",
        "400",
        "600",
        "7.5 GB",
        "3008.4",
        "132000",
        "3008.4",
        "-1.30084",
    ]
    assert any(line.strip().startswith("C (selected)") for line in lines)


def test_a_move_at_step_30_is_a_problem() -> None:
    found = session()
    boundary = record(found, "t1-step-boundary")
    boundary |= {"outcome": f"{AS}:move", "selected": B}
    problems = records.boundary_problems(boundary, C, B)
    assert "the step-30 outcome is move, expected keep" in problems
    assert f"the step-30 candidate is {B}, expected {C}" in problems


def test_a_transfer_far_from_3_s_or_a_cost_not_the_minimum_is_a_problem() -> None:
    boundary = copy.deepcopy(record(session(), "t1-step-boundary"))
    b = boundary["candidate"][0]["valuation"]
    b |= {"transfer-time": "750.0", "state-cost": "132000.0"}
    problems = records.boundary_problems(boundary, C, B)
    assert any("not about 3.0 s" in p for p in problems)
    assert any("not min(transfer, recompute)" in p for p in problems)


def test_a_tail_event_without_the_reduced_set_or_with_a_handoff_is_a_problem() -> None:
    found = session()
    found["descriptor"]["working-set"]["element"] = ANNOUNCED  # docs-extra still there
    found["handoff"] = [{"handoff-id": "ho-1"}]
    tail = record(found, "t8-tail-event")
    tail["degradation-applied"] = []
    tail["invalidation"]["acted-on"] = False
    problems = records.tail_problems(tail, found, C, ANNOUNCED)
    assert "the degradation applied is [], expected ['truncated-working-set']" in problems
    assert any(p.startswith("the working set kept is ") for p in problems)
    assert "the overrun was not acted on as a tail event" in problems
    assert "the session was migrated" in problems
    assert records.tail_problems(None, found, C, ANNOUNCED) == [
        "no decision recorded for the tail event"
    ]


def test_the_working_set_is_named_by_the_announced_elements() -> None:
    shown = session()["descriptor"]["working-set"]["element"]
    handles = [e | {"reuse-key": f"rk-{i}"} for i, e in enumerate(shown)]  # as the C-PS shows
    assert records.named(handles, ANNOUNCED) == ["ctx", "docs-core", "plan"]
    lines = records.working_set_lines(
        {"descriptor": {"working-set": {"element": handles}}}, ANNOUNCED
    )
    (extra,) = [line for line in lines if "docs-extra" in line]
    assert extra.split("|")[-1].strip() == "left behind"


def test_the_rule_must_be_the_commitment_in_force_and_active() -> None:
    found = session()
    rule = {
        "commitment-id": "cm-s-episode-1",
        "cs-id": "agent",
        "csci-id": C,
        "egress-forwarder": "188.3.67.4",
        "lifetime": 600,
        "match": {"session-id": "s-episode", "first-step": 29, "last-step": 30},
        "counters": {"state": "active"},
    }
    assert records.rule_problems([rule], found, "188.3.67.4") == []
    assert records.rule_row(rule, NAMES)[2:4] == ["s-episode steps 29-30", f"C {C}"]
    failed = rule | {"counters": {"state": "failed"}, "egress-forwarder": "188.3.67.3"}
    assert records.rule_problems([failed], found, "188.3.67.4") == [
        "the rule's egress is 188.3.67.3, expected 188.3.67.4",
        "the rule's state at the forwarder is failed, expected active",
    ]
    assert records.rule_problems([rule, rule], found, "188.3.67.4") == [
        "2 rules for the session, expected 1"
    ]


def test_the_close_shows_the_consumption_and_adds_no_decision() -> None:
    found = session() | {"state": "closed"}
    spent = records.consumed(found, 1, 30)
    assert spent == {"time": Decimal(4600), "tokens": Decimal(2400)}
    assert records.amounts(spent) == "time 4600 ms, tokens 2400"
    assert records.close_problems(found, 3, spent, spent) == []
    wanted = {"time": Decimal(4600), "tokens": Decimal(2400)}
    assert records.close_problems(found | {"state": "running"}, 2, {}, wanted) == [
        "the session's state is running, expected closed",
        "the close added 1 decision records",
        "the step's consumption is {}, expected "
        "{'time': Decimal('4600'), 'tokens': Decimal('2400')}",
    ]
