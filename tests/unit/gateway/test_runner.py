"""The runner against a C-PS fake at the :class:`~agents.gateway.client.Cps` seam: what it
sends, prints, checks and logs; a refusal ends only its session."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from agents.gateway.client import RefusedError
from agents.gateway.description import parse_description
from agents.gateway.plan import AS, plan
from agents.gateway.runner import Outcome, Runner
from controller.errors import ErrorItem, ErrorType
from controller.types import Json
from tests.unit.gateway.test_description import example


def _session_of(members: Json) -> str:
    for holder in (members, members.get("descriptor", {}), members.get("attribution", {})):
        if "session-id" in holder:
            return str(holder["session-id"])
    raise KeyError("session-id")


@dataclass
class FakeCps:
    """Keeps sessions, records a keep at C for each decision point, refuses on request."""

    refuse: set[tuple[str, str]] = field(default_factory=set)  # (session-id, operation)
    sessions: dict[str, Json] = field(default_factory=dict)
    calls: list[tuple[str, Json]] = field(default_factory=list)
    closed: bool = False

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        assert module == AS
        self.calls.append((operation, members))
        sid = _session_of(members)
        if (sid, operation) in self.refuse:
            item = ErrorItem(ErrorType.APPLICATION, "invalid-value", "refused", "/x")
            raise RefusedError(400, item)
        entry = self.sessions.setdefault(sid, {"state": "running", "decision-record": []})
        records = entry["decision-record"]
        if operation == "submit-descriptor" or members.get("boundary") == "step-start":
            number = str(len(records) + 1)
            trigger = members.get("trigger") or (
                None if operation == "submit-descriptor" else f"{AS}:t1-step-boundary"
            )
            record = {
                "record-id": number,
                "outcome": f"{AS}:keep",
                "selected": "C",
                "decision-point": f"{AS}:dp3-step-boundary",
                "exclusion": [{"csci-id": "A", "reason": f"{AS}:tenant-not-permitted"}],
            }
            if trigger:
                record["trigger"] = trigger
            records.append(record)
            if operation == "submit-descriptor":
                return {"evaluation": "completed", "selected": "C", "record-id": number}
        if operation == "invalidation-notice":
            return {"acted-on": True}
        if operation == "close-session":
            entry["state"] = "closed"
        return {}

    def session(self, session_id: str) -> Json | None:
        return self.sessions.get(session_id)

    def close(self) -> None:
        self.closed = True


def two_sessions() -> Json:
    document = example()
    session = document["sessions"][0]
    step = session["turns"][0]["steps"][0]
    step["expect"] = {
        "decisions": [{"trigger": "t1-step-boundary", "selected": "C"}],
        "acted-on": True,
    }
    step["pause"] = {"seconds": 2.5}
    session["admission"]["expect"] = {"decisions": [{"outcome": "keep"}]}
    second = {**session, "session-id": "s-two", "close": {"expect": {"state": "closed"}}}
    document["sessions"].append(second)
    return document


def run(cps: FakeCps, document: Json) -> tuple[Outcome, str, Runner, list[float]]:
    out = io.StringIO()
    slept: list[float] = []
    runner = Runner(cps, out, clock=lambda: 1_800_000_000.0, sleep=slept.append)
    outcome = runner.run(plan(parse_description(document, "d.json")))
    return outcome, out.getvalue(), runner, slept


def test_every_session_is_played_printed_and_checked() -> None:
    cps = FakeCps()
    outcome, printed, runner, slept = run(cps, two_sessions())
    assert outcome == Outcome(0, 0), printed
    assert outcome.ok
    per_session = [op for op, m in cps.calls if _session_of(m) == "s-episode"]
    assert per_session == [
        "submit-descriptor",
        "step-boundary",
        "invalidation-notice",
        "accounting-feedback",
        "step-boundary",
        "step-boundary",
        "close-session",
    ]
    assert slept == [2.5, 2.5]  # each session's pause
    assert "decision 2 at t1-step-boundary: keep C" in printed
    assert "excluded A: tenant-not-permitted" in printed
    assert printed.count("expect: held") == 6  # admission, step and close of each
    log = runner.journal.document("d.json")
    sent = [e for e in log["exchanges"] if e["operation"] != "get"]
    assert len(sent) == 14
    assert all("output" in e and "duration-ms" in e for e in sent)
    assert sent[0]["operation"] == f"{AS}:submit-descriptor"
    assert sent[0]["where"] == "sessions[0].descriptor"


def test_a_refusal_ends_its_session_which_is_still_closed_and_the_next_plays_on() -> None:
    cps = FakeCps(refuse={("s-episode", "invalidation-notice")})
    outcome, printed, _, slept = run(cps, two_sessions())
    assert outcome == Outcome(1, 0)
    assert not outcome.ok
    first = [op for op, m in cps.calls if _session_of(m) == "s-episode"]
    assert first == ["submit-descriptor", "step-boundary", "invalidation-notice", "close-session"]
    assert "invalidation-notice step-overrun" in printed
    assert "FAILED: invalid-value at /x: refused" in printed
    assert slept == [2.5]  # only the second session paused
    assert [op for op, m in cps.calls if _session_of(m) == "s-two"][-1] == "close-session"


def test_a_refused_admission_sends_nothing_more_for_its_session() -> None:
    cps = FakeCps(refuse={("s-episode", "submit-descriptor")})
    outcome, _, runner, _ = run(cps, two_sessions())
    assert outcome.failed == 1
    assert [op for op, m in cps.calls if _session_of(m) == "s-episode"] == ["submit-descriptor"]
    (refused,) = [e for e in runner.journal.entries if "error" in e]
    assert refused["error"] == ["invalid-value at /x: refused"]


def test_an_unmet_expectation_is_counted_and_printed_with_its_place() -> None:
    document = two_sessions()
    document["sessions"][1]["close"]["expect"]["state"] = "running"
    outcome, printed, _, _ = run(FakeCps(), document)
    assert outcome == Outcome(0, 1)
    assert "expect FAILED: sessions[1].close.expect.state: expected running, got closed" in printed
