"""The session description: strict reads whose refusals name the file and the key."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from agents.gateway.description import (
    ConfigError,
    load_description,
    parse_description,
)
from controller.types import Json
from tests.conftest import ROOT

EXAMPLE = ROOT / "agents" / "gateway" / "examples" / "step30-episode.json"


def example() -> Json:
    loaded: Json = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return loaded


def refusal(document: Json) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_description(document, "d.json")
    (item,) = caught.value.items
    return f"{item.path} | {item.message}"


def test_the_shipped_episode_reads_as_the_draft_tells_it() -> None:
    found = load_description(EXAMPLE)
    (session,) = found.sessions
    assert (session.session_id, session.tenant, session.service_id) == (
        "s-episode",
        "tenant-1",
        "agent",
    )
    assert (session.admission.turn_id, session.admission.step_id) == (1, 29)
    (turn,) = session.turns
    (step,) = turn.steps
    assert step.step_id == 30
    (call,) = step.tool_calls
    assert (call.endpoint, call.expected, call.elapsed) == (
        "192.0.2.0/24",
        Decimal(100),
        Decimal(4000),
    )
    assert call.overran
    assert step.cost is not None
    assert step.cost.amounts == (("time", Decimal(4600)), ("tokens", Decimal(2400)))
    assert step.expect is not None
    assert step.expect.decisions is not None
    boundary, tail = step.expect.decisions
    assert (boundary.trigger, boundary.outcome, boundary.selected) == (
        "t1-step-boundary",
        "keep",
        "C",
    )
    assert tail.degradation == ("truncated-working-set",)
    assert step.expect.working_set == ("ctx", "docs-core", "plan")
    assert session.close.send
    assert session.close.reason == "completed"


def test_a_file_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"sessions": [\n  {"session-id": }\n]}')
    with pytest.raises(ConfigError) as caught:
        load_description(path)
    assert caught.value.items[0].path == f"{path}:2"


@pytest.mark.parametrize(
    ("edit", "where", "message"),
    [
        (lambda d: d.pop("sessions"), "d.json: sessions", "missing"),
        (lambda d: d.update(sessions=[]), "d.json: sessions", "at least one session"),
        (lambda d: d.update(extra=1), "d.json: extra", "unknown key"),
        (lambda d: d["sessions"][0].pop("tenant"), "d.json: sessions[0].tenant", "missing"),
        (lambda d: d["sessions"][0]["descriptor"].update(tenant="t"),
         "d.json: sessions[0].descriptor.tenant", "given by the session"),
        (lambda d: d["sessions"][0].update(descriptor=[1]), "d.json: sessions[0].descriptor",
         "expected an object"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0].update({"step-id": -1}),
         "d.json: sessions[0].turns[0].steps[0].step-id", "expected an integer"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0].update({"step-id": 29}),
         "d.json: sessions[0].turns[0].steps[0].step-id", "described twice"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0]["tool-calls"][0].update(
            endpoint="192.0.2.1/24"),
         "d.json: sessions[0].turns[0].steps[0].tool-calls[0].endpoint", "not an IP prefix"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0]["tool-calls"][0].update(
            elapsed="slow"),
         "d.json: sessions[0].turns[0].steps[0].tool-calls[0].elapsed", "non-negative number"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0]["tool-calls"][0].update(expected=0),
         "d.json: sessions[0].turns[0].steps[0].tool-calls[0].expected", "positive"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0]["cost"].update(watts=3),
         "d.json: sessions[0].turns[0].steps[0].cost.watts", "unknown key"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0].update(cost={"currency": "EUR"}),
         "d.json: sessions[0].turns[0].steps[0].cost", "at least one of"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0]["expect"]["decisions"][0].update(
            outcome="stay"),
         "d.json: sessions[0].turns[0].steps[0].expect.decisions[0].outcome",
         "expected one of keep"),
        (lambda d: d["sessions"][0]["turns"][0]["steps"][0]["expect"].update(acted=True),
         "d.json: sessions[0].turns[0].steps[0].expect.acted", "unknown key"),
        (lambda d: d["sessions"][0]["turns"][0].update(steps=[]),
         "d.json: sessions[0].turns[0].steps", "needs steps or start"),
        (lambda d: d["sessions"][0]["close"].update(reason="done"),
         "d.json: sessions[0].close.reason", "completed or abandoned"),
        (lambda d: d["sessions"].append(copy.deepcopy(d["sessions"][0])),
         "d.json: sessions[1].session-id", "described twice"),
    ],
)  # fmt: skip
def test_each_refusal_names_its_place(edit: Any, where: str, message: str) -> None:
    document = example()
    edit(document)
    found = refusal(document)
    assert found.startswith(f"{where} | "), found
    assert message in found


def test_a_second_turn_with_the_same_id_is_refused() -> None:
    document = example()
    turns = document["sessions"][0]["turns"]
    turns.append({"turn-id": 1, "start": True})
    assert refusal(document).startswith("d.json: sessions[0].turns[1].turn-id | ")


def test_close_false_leaves_the_session_open_and_prefixed_identities_are_read() -> None:
    document = example()
    session = document["sessions"][0]
    session["close"] = False
    expect = session["turns"][0]["steps"][0]["expect"]["decisions"][1]
    expect["outcome"] = "ietf-cats-agent-selection:keep"
    expect["excluded"] = {"B": "ietf-cats-agent-selection:memory-does-not-fit"}
    (parsed,) = parse_description(document, "d.json").sessions
    assert not parsed.close.send
    step_expect = parsed.turns[0].steps[0].expect
    assert step_expect is not None
    assert step_expect.decisions is not None
    tail = step_expect.decisions[1]
    assert tail.outcome == "keep"
    assert tail.excluded == (("B", "memory-does-not-fit"),)


def test_a_pause_reads_its_seconds_working_set_and_expectation() -> None:
    document = example()
    step = document["sessions"][0]["turns"][0]["steps"][0]
    step["pause"] = {"seconds": 0.5, "working-set": {"element": []}, "expect": {"state": "running"}}
    (parsed,) = parse_description(document, "d.json").sessions
    pause = parsed.turns[0].steps[0].pause
    assert pause is not None
    assert (pause.seconds, pause.working_set) == (0.5, {"element": []})
    assert pause.expect is not None
    assert pause.expect.state == "running"
    assert pause.where == "sessions[0].turns[0].steps[0].pause"
