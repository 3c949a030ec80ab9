"""P9 under failure: the target refuses, the reservation expires, the transfer fails, messages
are repeated and reordered, the target's C-SMA is down. The source stays usable, no second
commitment and no second reservation appear (M26, M43)."""

from __future__ import annotations

from typing import Any

import pytest

from controller.agent_selection import handoff as machine
from controller.agent_selection.handoff import AbortReason, Handoff, HandoffState, Notice
from controller.errors import CatsError
from controller.model import Schema
from controller.types import CsciId, ReuseKey, SessionId
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.harness import Harness, harness

SESSION = "s-ho"


def _moving(schema: Schema, **double: Any) -> Harness:
    """6.8 at step 30 with B 0.5 s/step faster: the session at C decides to move to B."""
    h = harness(schema, drafts.example_68(b_delay=0.6), drafts.CONTEXT_68)
    for name, value in double.items():
        setattr(h.csma, name, value)
    h.call("submit-descriptor", {"descriptor": drafts.descriptor_68(SESSION, 29)})
    h.clock.now += 300
    faster = drafts.example_68(b_delay=0.3)
    h.call("advertise-forwarding-view", drafts.forwarding(faster, h.clock.now, sequence=2))
    h.call("step-boundary", {"session-id": SESSION, "turn-id": 1, "step-id": 30})
    return h


def _notice(h: Harness, reporter: str, status: str, **extra: Any) -> None:
    (handoff,) = h.session(SESSION)["handoff"]
    members = {
        "handoff-id": handoff["handoff-id"],
        "reporter": reporter,
        "status": status,
        "at": drafts.iso(h.clock.now),
        **extra,
    }
    h.call("state-transfer-notice", members)


def _source_stays(h: Harness, reason: str) -> None:
    session = h.session(SESSION)
    (handoff,) = session["handoff"]
    assert handoff["state"] == "aborted"
    assert handoff["abort-reason"] == f"ietf-cats-agent-selection:{reason}"
    assert session["current-commitment"] == "cm-s-ho-1"
    (commitment,) = session["commitment"]  # no second commitment
    assert (commitment["csci-id"], commitment["state"]) == ("C", "active")
    assert h.csma.count("reserve-state") <= 1
    assert h.named("handoff-state-change")[-1]["state"] == "aborted"


def test_the_target_refuses_the_reservation(schema: Schema) -> None:
    h = _moving(schema, refuse={"B"})
    _source_stays(h, "reservation-refused")
    assert h.csma.count("release-state") == 0  # nothing was reserved


def test_the_targets_csma_is_unreachable(schema: Schema) -> None:
    h = _moving(schema, unreachable={"B"})
    _source_stays(h, "reservation-refused")
    assert "unreachable" in h.session(SESSION)["handoff"][0]["abort-detail"]


def test_the_reservation_expires_before_the_working_set_is_usable(schema: Schema) -> None:
    h = _moving(schema, validity=5.0)
    h.clock.now += 6
    _notice(h, "target", "completed", **{"usable-key": ["ctx"]})
    _source_stays(h, "reservation-expired")
    assert h.csma.reservations == {}  # released at the target


def test_the_sweep_aborts_an_expired_reservation_and_releases_it(schema: Schema) -> None:
    h = _moving(schema, validity=5.0)
    h.clock.now += 6
    h.service.sweep()
    _source_stays(h, "reservation-expired")
    assert h.csma.count("release-state") == 1


def _change_cost(h: Harness) -> str | None:
    """The change cost charged to the session's time line (ms), None when nothing was."""
    for line in h.session(SESSION)["accounting"].get("budget", ()):
        if line["dimension"].endswith(":time") and "change-cost" in line:
            found: str = line["change-cost"]
            return found
    return None


def test_m46_a_refused_move_is_not_charged(schema: Schema) -> None:
    h = _moving(schema, refuse={"B"})
    _source_stays(h, "reservation-refused")
    for _ in range(2):
        h.clock.now += 61
        h.call("evaluate", {"session-id": SESSION, "trigger": f"{drafts.AS}:t1-step-boundary"})
    assert _change_cost(h) is None  # nothing moved: nothing charged (3008 ms before)


def test_m46_a_committed_move_is_charged_once(schema: Schema) -> None:
    h = _moving(schema)
    assert _change_cost(h) is None  # reserved, not yet moved
    for _ in range(2):
        _notice(h, "target", "completed", **{"usable-key": ["ctx"]})
    cost = _change_cost(h)
    assert cost is not None
    assert float(cost) > 0


def test_the_transfer_fails(schema: Schema) -> None:
    h = _moving(schema)
    _notice(h, "source", "failed", detail="link reset")
    _source_stays(h, "transfer-failed")
    with pytest.raises(CatsError) as late:  # too late: refused, and it stays aborted
        _notice(h, "target", "completed", **{"usable-key": ["ctx"]})
    (item,) = late.value.items
    assert (item.tag, item.app_tag) == ("operation-failed", "handoff-aborted")
    assert item.path == f"/{drafts.AS}:state-transfer-notice/handoff-id"
    _source_stays(h, "transfer-failed")


def test_a_failure_reported_after_the_commit_is_refused_and_changes_nothing(
    schema: Schema,
) -> None:
    h = _moving(schema)
    _notice(h, "target", "completed", **{"usable-key": ["ctx"]})
    before = h.session(SESSION)
    with pytest.raises(CatsError) as late:
        _notice(h, "source", "failed", detail="late")
    assert late.value.items[0].app_tag == "handoff-committed"
    assert h.session(SESSION) == before


def test_an_unusable_key_at_the_target_aborts(schema: Schema) -> None:
    h = _moving(schema)
    _notice(h, "target", "completed", **{"unusable-key": ["ctx"]})
    _source_stays(h, "transfer-failed")


def test_repeated_and_reordered_notices_commit_once(schema: Schema) -> None:
    h = _moving(schema)
    for _ in range(2):
        _notice(h, "target", "completed", **{"usable-key": ["ctx"]})
    _notice(h, "source", "completed")  # the source's notice after the target's: no effect
    session = h.session(SESSION)
    assert session["handoff"][0]["state"] == "committed"
    assert [c["state"] for c in session["commitment"]] == ["superseded", "active"]
    assert [n["state"] for n in h.named("handoff-state-change")] == ["reserved", "committed"]
    assert h.csma.count("reserve-state") == 1


def test_a_repeated_decision_reuses_the_handoff_in_flight(schema: Schema) -> None:
    h = _moving(schema)
    h.call(
        "evaluate", {"session-id": SESSION, "trigger": "ietf-cats-agent-selection:t2-turn-start"}
    )
    session = h.session(SESSION)
    assert len(session["handoff"]) == 1
    assert h.csma.count("reserve-state") == 1
    assert len(session["commitment"]) == 1


def _requested() -> Handoff:
    key = ReuseKey("ctx")
    return Handoff(
        "ho-1",
        SessionId("s"),
        CsciId("C"),
        CsciId("B"),
        2,
        100.0,
        130.0,
        (key,),
        7_500_000_000,
        {key: None},
        reservation_id="rsv-ho-1",
    )


ACCEPTED = {
    "reservation-id": "rsv-ho-1",
    "status": "accepted",
    "valid-until": "2100-01-01T00:00:00Z",
}


def test_a_targets_completion_before_the_reservation_reply_commits_once_reserved() -> None:
    done = Notice("target", "completed", frozenset({ReuseKey("ctx")}))
    early = machine.noticed(_requested(), done, 101.0)
    assert early.state is HandoffState.REQUESTED
    committed = machine.reserved(early, ACCEPTED, 102.0)
    assert committed.state is HandoffState.COMMITTED
    assert machine.reserved(committed, ACCEPTED, 103.0) is committed


@pytest.mark.parametrize(
    ("missing", "state"), [(0.1, HandoffState.COMMITTED), (0.3, HandoffState.ABORTED)]
)
def test_divergence_within_the_accepted_fraction_commits(
    missing: float, state: HandoffState
) -> None:
    key = ReuseKey("ctx")
    start = machine.reserved(
        Handoff(
            "ho-1",
            SessionId("s"),
            CsciId("C"),
            CsciId("B"),
            2,
            100.0,
            130.0,
            (key,),
            0,
            {key: 0.2},
            reservation_id="rsv-ho-1",
        ),
        ACCEPTED,
        101.0,
    )
    after = machine.noticed(start, Notice("target", "completed", divergence={key: missing}), 102)
    assert after.state is state
    if state is HandoffState.ABORTED:
        assert after.abort_reason is AbortReason.DIVERGENCE_EXCEEDED


def test_the_handoff_timeout_aborts() -> None:
    start = machine.reserved(_requested(), ACCEPTED, 101.0)
    assert machine.expired(start, 129.0) is start
    late = machine.expired(start, 131.0)
    assert late.abort_reason is AbortReason.HANDOFF_TIMEOUT


TOOL_RESULT = drafts.element("tr", "tool-result", 1e5, 0, role="constraint")


def test_p9_a_first_placement_that_assumes_a_transfer_reserves_and_commits_on_usable() -> None:
    """Y is nearer but lacks the tool result X holds (a tool result is never recomputed):
    its valuation assumes a transfer from X, so the admission reserves at Y and commits only
    when Y reports the result usable; before, it committed at once with no reservation."""
    with Schema() as schema:
        specs = [
            drafts.Spec("X", delay=0.9, holds=("tr",)),
            drafts.Spec("Y", delay=0.1),
        ]
        h = harness(schema, specs)
        desc = drafts.descriptor("s-tr", 1, [TOOL_RESULT])
        reply = h.call("submit-descriptor", {"descriptor": desc})
        assert reply["selected"] == "Y"
        assert "commitment" not in reply  # not committed before the transfer
        (reserve,) = [c for c in h.csma.calls if c[0] == "reserve-state"]
        assert reserve[2]["csci-id"] == "Y"
        assert [e["reuse-key"] for e in reserve[2]["element"]] == ["tr"]
        session = h.session("s-tr")
        (handoff,) = session["handoff"]
        assert (handoff["source"], handoff["target"], handoff["state"]) == ("X", "Y", "reserved")
        assert "commitment" not in session
        h.call(
            "state-transfer-notice",
            {
                "handoff-id": handoff["handoff-id"],
                "reporter": "target",
                "status": "completed",
                "usable-key": ["tr"],
                "at": drafts.iso(h.clock.now),
            },
        )
        (commitment,) = h.session("s-tr")["commitment"]
        assert (commitment["csci-id"], commitment["state"]) == ("Y", "active")


def test_until_the_move_commits_the_step_runs_at_the_source_under_its_rule(
    schema: Schema,
) -> None:
    """P9: commit only when the working set is usable, otherwise remain at the source. So
    while the move to B is in flight, step 30 belongs to C's commitment (its steering rule
    matches step 30), and the committed move takes over from step 30."""
    h = _moving(schema)
    session = h.session(SESSION)
    assert session["handoff"][0]["state"] == "reserved"
    (source,) = session["commitment"]
    assert (source["csci-id"], source["steps"]) == ("C", {"first": 29, "last": 30})
    _notice(h, "target", "completed", **{"usable-key": ["ctx"]})
    moved = h.session(SESSION)["commitment"]
    assert [(c["csci-id"], c["state"]) for c in moved] == [("C", "superseded"), ("B", "active")]
    assert moved[1]["steps"]["first"] == 30


def test_an_aborted_move_leaves_the_step_at_the_source(schema: Schema) -> None:
    h = _moving(schema)
    _notice(h, "target", "failed")
    _source_stays(h, "transfer-failed")
    (source,) = h.session(SESSION)["commitment"]
    assert source["steps"] == {"first": 29, "last": 30}
