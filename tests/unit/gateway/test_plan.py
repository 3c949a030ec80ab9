"""The requests a description makes, and their check against the schema before anything goes."""

from __future__ import annotations

import pytest

from agents.gateway.description import ConfigError, parse_description
from agents.gateway.plan import AS, GATEWAY, check, plan
from controller.model import Schema
from controller.types import Json
from tests.unit.gateway.test_description import example

NOW = 1_800_000_000.0


def requests_of(document: Json) -> list[tuple[str, str, Json]]:
    """(stage label, operation, input) of every request, in order."""
    (session,) = plan(parse_description(document, "d.json"))
    return [
        (stage.label, e.operation, e.input(NOW))
        for stage in session.stages
        for e in stage.exchanges
    ]


def test_the_episode_admits_announces_step_30_reports_the_overrun_and_the_cost() -> None:
    found = requests_of(example())
    assert [(label, op) for label, op, _ in found] == [
        ("admission turn 1 step 29", "submit-descriptor"),
        ("turn 1 step 30", "step-boundary"),
        ("turn 1 step 30", "invalidation-notice"),
        ("turn 1 step 30", "accounting-feedback"),
        ("close (completed)", "close-session"),
    ]
    admitted = found[0][2]["descriptor"]
    assert {
        k: admitted[k] for k in ("service-id", "session-id", "tenant", "turn-id", "step-id")
    } == {
        "service-id": "agent",
        "session-id": "s-episode",
        "tenant": "tenant-1",
        "turn-id": 1,
        "step-id": 29,
    }
    assert "trigger" not in found[0][2]  # admission: DP1
    assert found[1][2] == {
        "session-id": "s-episode",
        "turn-id": 1,
        "step-id": 30,
        "boundary": "step-start",
        "at": "2027-01-15T08:00:00.000Z",
    }
    notice = found[2][2]
    assert (notice["reporter"], notice["condition"]) == (GATEWAY, f"{AS}:step-overrun")
    assert notice["step-progress"] == {
        "elapsed": "4000",
        "expected": "100",
        "endpoint": "192.0.2.0/24",
        "remaining": "2000",
    }
    charged = found[3][2]
    assert charged["report-id"] == "s-episode/turn-1/step-30"  # a retry is charged once
    assert charged["consumption"] == [
        {"dimension": f"{AS}:time", "amount": "4600"},
        {"dimension": f"{AS}:tokens", "amount": "2400"},
    ]
    assert found[4][2]["reason"] == "completed"


def test_a_call_within_its_expected_time_is_not_reported() -> None:
    document = example()
    call = document["sessions"][0]["turns"][0]["steps"][0]["tool-calls"][0]
    call["elapsed"] = 80
    operations = [op for _, op, _ in requests_of(document)]
    assert "invalidation-notice" not in operations


def test_a_revised_step_is_submitted_at_t1_before_its_boundary_with_the_whole_descriptor() -> None:
    document = example()
    session = document["sessions"][0]
    step = session["turns"][0]["steps"][0]
    step["descriptor"] = {"capability-tier": "large"}
    step["working-set"] = {"element": [session["descriptor"]["working-set"]["element"][0]]}
    step["pause"] = {"seconds": 1.5}
    session["turns"].append({"turn-id": 2, "start": True, "cost": {"cost": 0.5, "currency": "EUR"}})
    found = requests_of(document)
    labels = [(label, op) for label, op, _ in found]
    assert labels[1:3] == [
        ("turn 1 step 30", "submit-descriptor"),
        ("turn 1 step 30", "step-boundary"),
    ]
    revised = found[1][2]
    assert revised["trigger"] == f"{AS}:t1-step-boundary"
    assert revised["descriptor"]["capability-tier"] == "large"
    assert revised["descriptor"]["remaining-horizon"] == 40  # kept from the session's content
    assert [e["reuse-key"] for e in revised["descriptor"]["working-set"]["element"]] == ["ctx"]
    assert found[2][2]["working-set"] == step["working-set"]
    assert labels[5:] == [
        ("pause after step 30", "step-boundary"),
        ("wake-up after step 30", "step-boundary"),
        ("turn 2 start", "step-boundary"),
        ("turn 2 end", "accounting-feedback"),
        ("close (completed)", "close-session"),
    ]
    assert [found[i][2]["boundary"] for i in (5, 6, 7)] == ["pause", "wake-up", "turn-start"]
    assert found[8][2]["consumption"] == [
        {"dimension": f"{AS}:cost", "amount": "0.5", "currency": "EUR"}
    ]
    assert (found[8][2]["scope"], found[8][2]["report-id"]) == ("turn", "s-episode/turn-2")
    (session_plan,) = plan(parse_description(document, "d.json"))
    assert [s.sleep for s in session_plan.stages if s.sleep] == [1.5]


def test_the_shipped_episode_is_valid_rpc_input(schema: Schema) -> None:
    check(plan(parse_description(example(), "d.json")), schema, NOW, "d.json")


def test_every_request_the_schema_refuses_is_named_by_its_place(schema: Schema) -> None:
    document = example()
    element = document["sessions"][0]["descriptor"]["working-set"]["element"][0]
    element["element-size"] = "-3"
    cost = document["sessions"][0]["turns"][0]["steps"][0]["cost"]
    cost.update(cost=0.1, currency="euro")
    with pytest.raises(ConfigError) as caught:
        check(plan(parse_description(document, "d.json")), schema, NOW, "d.json")
    first, second = caught.value.items
    assert first.path == "d.json: sessions[0].descriptor"
    assert "submit-descriptor" in first.message
    assert "element[reuse-key='ctx']/element-size" in first.message
    assert second.path == "d.json: sessions[0].turns[0].steps[0].cost"
    assert "currency" in second.message


def test_a_descriptor_revision_the_schema_refuses_is_named_by_its_step(schema: Schema) -> None:
    document = example()
    step = document["sessions"][0]["turns"][0]["steps"][0]
    step["descriptor"] = {"mode": "ietf-cats-agent-selection:telepathy"}
    with pytest.raises(ConfigError) as caught:
        check(plan(parse_description(document, "d.json")), schema, NOW, "d.json")
    (item,) = caught.value.items
    assert item.path == "d.json: sessions[0].turns[0].steps[0].descriptor"
    assert "/descriptor/mode" in item.message
