"""The C-PS handlers over the in-memory C-SMA: the draft's worked examples, P0-P11 wiring.

Every input is checked by libyang as the server core would check it, and every output,
notification and state document is validated against ietf-cats-agent-selection.
"""

from __future__ import annotations

from typing import Any

import pytest

from controller.agent_selection.config import context
from controller.datastore.api import Principal
from controller.errors import CatsError
from controller.model import Schema
from controller.types import CsciId
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.harness import AS, Harness, harness

MOVE, KEEP = f"{AS}:move", f"{AS}:keep"


def _admit(h: Harness, session: str, desc: dict[str, Any]) -> dict[str, Any]:
    return h.call("submit-descriptor", {"descriptor": desc})


@pytest.mark.parametrize(("extra", "chosen"), [(0.5, "C"), (0.599, "C"), (0.601, "B"), (0.7, "B")])
def test_84_a_excluded_on_capability_c_preferred_unless_its_forwarding_exceeds_06_s(
    schema: Schema, extra: float, chosen: str
) -> None:
    h = harness(schema, drafts.example_84(extra))
    reply = _admit(h, "s-84", drafts.descriptor_84("s-84"))
    assert reply["selected"] == chosen
    excluded_list: list[dict[str, str]] = reply["excluded"]
    (excluded,) = excluded_list
    assert excluded["csci-id"] == "A"
    assert excluded["reason"] == f"{AS}:capability-tier-below-required"
    if extra == 0.5:
        assert reply["suitability"] == "-1.150000"
    (record,) = h.session("s-84")["decision-record"]
    b = next(c for c in record["candidate"] if c["csci-id"] == "B")
    assert b["valuation"]["state-cost"] == "600.000"  # 6,000 tokens at 10,000 tokens/s
    assert h.named("decision-recorded")[0]["decision-point"] == f"{AS}:dp1-session-admission"


def test_68_step30_keeps_c_since_b_gains_2_s_over_10_steps_against_3008_s(
    schema: Schema,
) -> None:
    h = harness(schema, drafts.example_68(b_delay=0.6), drafts.CONTEXT_68)
    first = _admit(h, "s-68", drafts.descriptor_68("s-68", 29))
    assert first["selected"] == "C"
    h.clock.now += 300
    h.call("step-boundary", {"session-id": "s-68", "turn-id": 1, "step-id": 30})
    session = h.session("s-68")
    last = session["decision-record"][-1]
    assert (last["step-id"], last["outcome"], last["selected"]) == (30, KEEP, "C")
    assert last["trigger"] == f"{AS}:t1-step-boundary"
    b = next(c for c in last["candidate"] if c["csci-id"] == "B")["valuation"]
    assert (b["transfer-time"], b["recompute-time"]) == ("3008.000", "128000.000")
    assert last["change"]["gain-time"] == "2.000000"
    (commitment,) = session["commitment"]  # extended, not a second commitment (P8)
    assert commitment["steps"] == {"first": 29, "last": 30}
    assert h.csma.count("reserve-state") == 0


def test_68_step30_moves_to_b_through_a_handoff_when_it_gains_5_s(schema: Schema) -> None:
    specs = drafts.example_68(b_delay=0.6)
    h = harness(schema, specs, drafts.CONTEXT_68)
    _admit(h, "s-68", drafts.descriptor_68("s-68", 29))
    h.clock.now += 300
    faster = drafts.example_68(b_delay=0.3)
    h.call("advertise-forwarding-view", drafts.forwarding(faster, h.clock.now, sequence=2))
    h.call("advertise-capability", drafts.capability(faster, h.clock.now, sequence=2))
    h.call("step-boundary", {"session-id": "s-68", "turn-id": 1, "step-id": 30})
    session = h.session("s-68")
    last = session["decision-record"][-1]
    assert (last["outcome"], last["selected"]) == (MOVE, "B")
    assert last["change"]["cost"] == "3008.000"
    (handoff,) = session["handoff"]
    assert (handoff["state"], handoff["source"], handoff["target"]) == ("reserved", "C", "B")
    assert session["current-commitment"] == "cm-s-68-1"  # still at the source
    reserve = next(m for op, _, m in h.csma.calls if op == "reserve-state")
    assert [e["reuse-key"] for e in reserve["element"]] == ["ctx"]
    assert reserve["size"] == "7500000000"
    h.call(
        "state-transfer-notice",
        {
            "handoff-id": handoff["handoff-id"],
            "reporter": "target",
            "status": "completed",
            "usable-key": ["ctx"],
            "at": drafts.iso(h.clock.now),
        },
    )
    session = h.session("s-68")
    assert session["handoff"][0]["state"] == "committed"
    current = session["current-commitment"]
    assert next(c for c in session["commitment"] if c["commitment-id"] == current)["csci-id"] == "B"
    states = [n["state"] for n in h.named("handoff-state-change")]
    assert states == ["reserved", "committed"]
    change = session["accounting"]["budget"][0]
    assert change["change-cost"] == "3008.000"  # M46: the move is charged to the session


def test_84_step30_episode_keeps_c_and_the_tail_event_narrows_the_retrieval_set(
    schema: Schema,
) -> None:
    h = harness(schema, drafts.episode(), drafts.CONTEXT_68)
    assert _admit(h, "s-ep", drafts.descriptor_episode("s-ep", 29))["selected"] == "C"
    h.clock.now += 300
    h.call("step-boundary", {"session-id": "s-ep", "turn-id": 1, "step-id": 30})
    last = h.session("s-ep")["decision-record"][-1]
    assert (last["outcome"], last["selected"]) == (KEEP, "C")  # B's free capacity: not enough
    reply = h.call("invalidation-notice", drafts.overrun("s-ep", h.clock.now))
    assert reply["acted-on"] is True
    result = reply["re-evaluation"]
    assert (result["selected"], result["outcome"]) == ("C", KEEP)
    assert result["fallback-rung"] == f"{AS}:degrade-within-class"
    assert result["degradation-applied"] == [f"{AS}:truncated-working-set"]
    assert "handoff-id" not in result
    (tail,) = h.named("tail-event")
    assert (tail["action"], tail["factor"]) == ("degrade", "3.00")  # the module's default
    session = h.session("s-ep")
    assert "handoff" not in session
    kept = [e["reuse-key"] for e in session["descriptor"]["working-set"]["element"]]
    scope = h.service.scope
    assert kept == [scope.handle(drafts.TENANT, k) for k in ("ctx", "docs-core", "plan")]
    assert h.csma.count("reserve-state") == 0


def test_unknown_session_is_an_rpc_error_naming_the_path(schema: Schema) -> None:
    h = harness(schema, drafts.example_84(0.5))
    with pytest.raises(CatsError) as raised:
        h.call("step-boundary", {"session-id": "nobody", "step-id": 1})
    (item,) = raised.value.items
    assert (item.tag, item.app_tag) == ("invalid-value", "unknown-session")
    assert item.path == f"/{AS}:step-boundary/session-id"
    with pytest.raises(CatsError) as raised:
        h.call(
            "state-transfer-notice",
            {
                "handoff-id": "ho-x",
                "reporter": "target",
                "status": "completed",
                "at": drafts.iso(0),
            },
        )
    assert raised.value.items[0].path == f"/{AS}:state-transfer-notice/handoff-id"


def test_an_advertisement_of_an_unconfigured_candidate_is_refused_and_changes_nothing(
    schema: Schema,
) -> None:
    h = harness(schema, drafts.example_84(0.5))
    stray = drafts.capability([drafts.Spec("Z")], h.clock.now, sequence=9)
    with pytest.raises(CatsError) as raised:
        h.call("advertise-capability", stray)
    assert raised.value.items[0].path == (
        f"/{AS}:advertise-capability/candidate[csci-id='Z']/csci-id"
    )
    assert "Z" not in h.service.advertisements._book.computing


def test_section14_advertisements_beyond_the_rate_are_refused_and_dropped(
    schema: Schema,
) -> None:
    """rate-limits/max-advertisement-rate per advertiser (the authenticated user) and
    second: the third in one second is refused (resource-denied, rate-limited) and changes
    nothing; another advertiser is not held up; the next second admits again."""
    specs = drafts.example_84(0.5)
    h = harness(schema, specs, {"rate-limits": {"max-advertisement-rate": 2}})
    adverts = h.service.advertisements
    csma, other = Principal("csma-1"), Principal("csma-2")
    h.clock.now = float(int(h.clock.now) + 10)  # the start of a second: one window below

    def advertise(principal: Principal, sequence: int) -> None:
        members = h.checked_input(
            "advertise-capability", drafts.capability(specs, h.clock.now, sequence=sequence)
        )
        adverts.advertise_capability(principal, members)

    advertise(csma, 10)
    advertise(csma, 11)
    before = dict(adverts._book.sequences)
    with pytest.raises(CatsError) as raised:
        advertise(csma, 12)
    (item,) = raised.value.items
    assert (item.tag, item.app_tag, item.path) == (
        "resource-denied",
        "rate-limited",
        f"/{AS}:advertise-capability",
    )
    assert "csma-1" in item.message
    assert adverts._book.sequences == before  # dropped: not even its sequence number
    advertise(other, 13)  # another advertiser has its own window
    h.clock.now += 1.0
    advertise(csma, 14)  # the next second


def test_section14_bounds_left_unconfigured_are_the_modules_defaults(schema: Schema) -> None:
    """Every default of the selection context is the YANG's (the refines of
    agent-selection/selection-context), read with running: an eleventh advertisement in a
    second is refused without any configuration."""
    specs = drafts.example_84(0.5)
    h = harness(schema, specs)
    built, bounds = context(h._config().context)
    assert (
        bounds.max_decision_rate,
        bounds.max_state_query_rate,
        bounds.max_advertisement_rate,
        bounds.max_reservation_rate,
        bounds.handoff_timeout,
        bounds.retention_after_close,
    ) == (60, 100, 10, 6, 60.0, 3600.0)
    stability = built.stability
    assert (stability.min_interval, stability.min_improvement, stability.sustain_period) == (
        30.0,
        0.1,
        10.0,
    )
    assert (built.look_ahead_horizon, built.tail_detection_factor) == (5, 3.0)
    assert (built.pacing.uneven_spending, built.pacing.reserve_fraction) == (True, 0.2)
    h.clock.now = float(int(h.clock.now) + 10)
    members = h.checked_input("advertise-capability", drafts.capability(specs, h.clock.now))
    for _ in range(10):
        h.service.advertisements.advertise_capability(Principal("csma-1"), members)
    with pytest.raises(CatsError) as raised:
        h.service.advertisements.advertise_capability(Principal("csma-1"), members)
    assert raised.value.items[0].app_tag == "rate-limited"


def test_p1_a_step_the_commitment_covers_is_not_decided_again(schema: Schema) -> None:
    h = harness(schema, drafts.example_84(0.5))
    _admit(h, "s-1", drafts.descriptor_84("s-1"))
    again = h.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-1")})
    assert again["evaluation"] == "deferred"
    assert len(h.session("s-1")["decision-record"]) == 1


def test_p2_a_revised_descriptor_of_the_running_step_is_evaluated_as_a_decision_point(
    schema: Schema,
) -> None:
    """Step 30 runs at C (the context is there); the gateway revises its descriptor: the
    context is no longer needed. B is 0.2 s/step faster and holds the documents, so the
    revision moves the session, although the step-boundary announced the step in flight."""
    h = harness(schema, drafts.example_68(b_delay=0.6), drafts.CONTEXT_68)
    _admit(h, "s-rev", drafts.descriptor_68("s-rev", 29))
    h.clock.now += 300
    h.call("step-boundary", {"session-id": "s-rev", "turn-id": 1, "step-id": 30})
    assert h.session("s-rev")["decision-record"][-1]["outcome"] == KEEP
    assert h.session("s-rev")["step-in-flight"] is True
    revised = drafts.descriptor_68("s-rev", 30)
    revised["working-set"]["element"] = [drafts.DOC_SET]
    reply = h.call("submit-descriptor", {"descriptor": revised})
    assert reply["evaluation"] == "completed"
    assert (reply["outcome"], reply["selected"]) == (MOVE, "B")  # hold-and-watch before
    check = h.session("s-rev")["decision-record"][-1]["stability"]
    assert check["step-in-flight"] is False


def test_p8_a_repeated_decision_never_makes_a_second_commitment(schema: Schema) -> None:
    h = harness(schema, drafts.example_84(0.5))
    _admit(h, "s-1", drafts.descriptor_84("s-1"))
    for _ in range(3):
        reply = h.call("evaluate", {"session-id": "s-1", "trigger": f"{AS}:t2-turn-start"})
        assert reply["commitment"]["commitment-id"] == "cm-s-1-1"
        assert reply["commitment"]["steering-instruction-id"] == "si-cm-s-1-1"
    assert len(h.session("s-1")["commitment"]) == 1


def test_section13_the_decision_rate_of_a_session_is_bounded(schema: Schema) -> None:
    context = {"rate-limits": {"max-decision-rate": 2}}
    h = harness(schema, drafts.example_84(0.5), context)
    _admit(h, "s-1", drafts.descriptor_84("s-1"))
    replies = [
        h.call(
            "submit-descriptor",
            {"descriptor": drafts.descriptor_84("s-1"), "trigger": f"{AS}:t2-turn-start"},
        )
        for _ in range(3)
    ]
    assert [r["evaluation"] for r in replies] == ["completed", "deferred", "deferred"]


def test_p2_missing_elements_are_asked_for_and_stay_unknown(schema: Schema) -> None:
    h = harness(schema, drafts.example_84(0.5))
    desc = drafts.descriptor_84("s-1")
    del desc["capability-tier"]
    reply = _admit(h, "s-1", desc)
    asked = {n["element"] for n in h.named("descriptor-refinement-request")}
    assert asked == {f"{AS}:capability-tier"}
    assert reply["selected"] == "A"  # no tier asked for: the near small instance serves
    assert "excluded" not in reply


def test_p11_accounting_is_charged_once_and_thresholds_pace_then_refuse(schema: Schema) -> None:
    context = {
        "budget-pacing": {
            "threshold": [
                {"fraction": "0.5", "action": "pace"},
                {"fraction": "0.9", "action": "refuse"},
            ]
        }
    }
    h = harness(schema, drafts.example_84(0.5), context)
    desc = drafts.descriptor_84("s-1")
    desc["budget"] = [
        {"dimension": f"{AS}:tokens", "scope": "session", "limit": "1000", "kind": "ceiling"}
    ]
    _admit(h, "s-1", desc)

    def report(report_id: str, amount: str) -> None:
        h.call(
            "accounting-feedback",
            {
                "report-id": report_id,
                "attribution": {"session-id": "s-1", "turn-id": 1, "step-id": 1},
                "consumption": [{"dimension": f"{AS}:tokens", "amount": amount}],
            },
        )

    report("r1", "600")
    report("r1", "600")  # repeated: charged once
    line = h.session("s-1")["accounting"]["budget"][0]
    assert line["consumed"] == "600.000"
    assert [n["action"] for n in h.named("budget-threshold")] == ["pace"]
    report("r2", "350")
    assert [n["action"] for n in h.named("budget-threshold")] == ["pace", "refuse"]
    refused = h.call(
        "evaluate", {"session-id": "s-1", "trigger": f"{AS}:t1-step-boundary", "step-id": 2}
    )
    assert refused["step-failure"]["constraint"] == f"{AS}:budget"
    assert refused["step-failure"]["trigger"] == f"{AS}:t9-budget-threshold"


def test_dp10_close_releases_state_at_the_csma_and_keeps_the_records(schema: Schema) -> None:
    h = harness(schema, drafts.example_84(0.5))
    _admit(h, "s-1", drafts.descriptor_84("s-1"))
    h.call("close-session", {"session-id": "s-1", "reason": "completed"})
    h.call("close-session", {"session-id": "s-1", "reason": "completed"})  # idempotent
    (release,) = [m for op, _, m in h.csma.calls if op == "release-state"]
    assert release == {
        "session-id": "s-1",
        "tenant": drafts.TENANT,
        "csci-id": ["C"],
        "reuse-key": ["kv", "docs"],
    }
    session = h.session("s-1")
    assert session["state"] == "closed"
    assert len(session["decision-record"]) == 1  # M39: kept after the close
    h.clock.now += 3601
    assert "session" not in h.state()


def test_section15_reuse_keys_in_state_are_scoped_and_unlinkable_across_tenants(
    schema: Schema,
) -> None:
    h = harness(schema, drafts.example_84(0.5))
    scope = h.service.scope
    assert scope.handle("tenant-1", "kv") != scope.handle("tenant-2", "kv")
    assert scope.handle("tenant-1", "kv") == scope.handle("tenant-1", "kv")
    _admit(h, "s-1", drafts.descriptor_84("s-1"))
    shown = str(h.state())
    assert "'kv'" not in shown
    assert scope.handle("tenant-1", "kv") in shown


def test_t7_an_instance_degradation_re_evaluates_the_sessions_committed_to_it(
    schema: Schema,
) -> None:
    h = harness(schema, drafts.example_84(0.5))
    _admit(h, "s-1", drafts.descriptor_84("s-1"))
    reply = h.call(
        "invalidation-notice",
        {
            "reporter": "ietf-cats-types:c-sma",
            "condition": f"{AS}:instance-degraded",
            "csci-id": "C",
            "at": drafts.iso(h.clock.now),
        },
    )
    assert reply == {"acted-on": True}
    last = h.session("s-1")["decision-record"][-1]
    assert last["decision-point"] == f"{AS}:dp7-constraint-at-risk"
    assert last["invalidation"]["condition"] == f"{AS}:instance-degraded"


def test_section14_a_source_repeatedly_contradicted_is_discounted(schema: Schema) -> None:
    h = harness(schema, drafts.example_84(0.5))
    notice = {
        "reporter": "ietf-cats-types:c-ps",
        "condition": f"{AS}:value-contradicted",
        "source": "c-sma-1",
        "at": drafts.iso(h.clock.now),
    }
    for _ in range(10):
        assert h.call("invalidation-notice", notice) == {"acted-on": False}
    shown = h.service.candidates_state()[f"{AS}:candidates"]["candidate"]
    accuracy = {c["csci-id"]: c["source-accuracy"] for c in shown}
    assert accuracy["C"] == {
        "contradicted-values": "10",
        "tail-underreports": "0",
        "discount": "1.0000",
    }
    discounts = h.service._decisions.book.discounts([CsciId(c) for c in "ABC"])
    assert discounts == {"A": 1.0, "B": 1.0, "C": 1.0}


def test_section14_an_unattributed_value_never_satisfies_a_constraint(schema: Schema) -> None:
    specs = drafts.example_84(0.5)
    h = harness(schema, specs)
    unattributed = drafts.capability(specs, h.clock.now, sequence=2)
    for entry in unattributed["candidate"]:
        if entry["csci-id"] == "C":
            del entry["computing"]["capability"]["source"]
    h.call("advertise-capability", unattributed)
    reply = _admit(h, "s-1", drafts.descriptor_84("s-1"))
    reasons = {(e["csci-id"], e["reason"]) for e in reply["excluded"]}
    assert ("C", "ietf-cats-types:value-unattributed") in reasons
    assert reply["selected"] == "B"


def test_the_sweeper_starts_and_stops_and_closes_the_southbound(schema: Schema) -> None:
    h = harness(schema, drafts.example_84(0.5))
    h.service.start()
    h.service.close()


def test_p1_a_turn_whose_steps_are_never_announced_is_one_step(schema: Schema) -> None:
    h = harness(schema, drafts.example_84(0.5))
    _admit(h, "s-1", drafts.descriptor_84("s-1"))
    h.call("step-boundary", {"session-id": "s-1", "turn-id": 2, "boundary": "turn-start"})
    h.call(
        "accounting-feedback",
        {
            "report-id": "t2",
            "attribution": {"session-id": "s-1", "turn-id": 2},
            "consumption": [{"dimension": f"{AS}:time", "amount": "1500"}],
        },
    )
    session = h.session("s-1")
    last = session["decision-record"][-1]
    assert (last["decision-point"], last["turn-id"], last["step-id"]) == (
        f"{AS}:dp2-turn-start",
        2,
        1,
    )
    (commitment,) = session["commitment"]
    assert commitment["steps"] == {"first": 1, "last": 1}
    (turn,) = [t for t in session["accounting"]["turn"] if t["turn-id"] == 2]
    assert turn["budget"][0]["consumed"] == "1500.000"
    assert "step" not in turn  # the whole turn is the step


def test_m34_a_mean_for_a_p95_objective_is_unverified_and_named_in_the_record(
    schema: Schema,
) -> None:
    """C reports its step latency as a mean only; the 2 s p95 objective is a preference (the
    YANG default role): the record does not say tail-ok true for C, it says the tail is
    unverified and names the substitution in qualified-value."""
    specs = drafts.example_84(0.5)
    h = harness(schema, specs)
    advert = drafts.capability(specs, h.clock.now, sequence=2)
    c = next(x for x in advert["candidate"] if x["csci-id"] == "C")
    latency = c["computing"]["step-latency"]
    latency["mean"] = latency.pop("p95")
    del latency["median"]
    h.call("advertise-capability", advert)
    _admit(h, "s-mean", drafts.descriptor_84("s-mean"))
    (record,) = h.session("s-mean")["decision-record"]
    by_id = {x["csci-id"]: x["valuation"] for x in record["candidate"]}
    assert "tail-ok" not in by_id["C"]
    assert by_id["C"]["tail-verified"] is False
    assert by_id["B"]["tail-ok"] is True  # B's p95 was reported: verified
    substituted = [
        q
        for q in record["qualified-value"]
        if q["csci-id"] == "C" and q["condition"] == "mean-for-tail"
    ]
    assert substituted == [
        {
            "index": substituted[0]["index"],
            "element": f"{AS}:step-latency",
            "csci-id": "C",
            "condition": "mean-for-tail",
            "used-in": "preference",
            "effect": "preference-reported",
        }
    ]
