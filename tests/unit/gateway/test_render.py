"""What the gateway prints of decision records and exchanges."""

from __future__ import annotations

from agents.gateway.render import exchange_line, record_lines

AS = "ietf-cats-agent-selection"


def test_a_kept_step_shows_the_change_weighed_and_the_stability_rules() -> None:
    record = {
        "record-id": "2",
        "trigger": f"{AS}:t1-step-boundary",
        "step-id": 30,
        "outcome": f"{AS}:keep",
        "selected": "C",
        "suitability": "-1.150000",
        "eligible": ["B", "C"],
        "change": {
            "from": "C",
            "to": "B",
            "cost": "3008.400",
            "transfer-or-rebuild": "3008.400",
            "gain": "-1.508400",
            "horizon-steps": 10,
        },
        "stability": {"applied": True, "gain-covers-cost": False, "step-in-flight": False},
    }
    assert record_lines(record) == [
        "decision 2 at t1-step-boundary step 30: keep C (suitability -1.150000)",
        "  eligible: B, C",
        "  change C -> B: cost 3008.400 ms, transfer or rebuild 3008.400 ms, "
        "gain -1.508400 over 10 steps",
        "  stability rules applied (gain covers cost no, step in flight no)",
    ]


def test_exclusions_the_ladder_and_a_failure_are_shown_with_their_reasons() -> None:
    record = {
        "record-id": "3",
        "decision-point": f"{AS}:dp8-tail-event",
        "exclusion": [
            {
                "csci-id": "A",
                "reason": f"{AS}:capability-tier-below-required",
                "constraint": f"{AS}:capability-tier",
            }
        ],
        "fallback-rung": f"{AS}:fail-step",
        "degradation-applied": [f"{AS}:truncated-working-set"],
        "handoff-id": "ho-1",
        "invalidation": {"condition": f"{AS}:step-overrun", "acted-on": True},
        "failure": {
            "constraint": f"{AS}:objective",
            "detail": "2 s at p95",
            "rejected": [{"csci-id": "B", "reason": f"{AS}:tail-objective-breached"}],
        },
    }
    assert record_lines(record) == [
        "decision 3 at dp8-tail-event: no selection",
        "  excluded A: capability-tier-below-required on capability-tier",
        "  fallback rung: fail-step",
        "  degradation applied: truncated-working-set",
        "  handoff started: ho-1",
        "  invalidation: step-overrun, acted on",
        "  failure: objective 2 s at p95",
        "    excluded B: tail-objective-breached",
    ]


def test_each_exchange_is_one_line_with_its_answer() -> None:
    boundary = {
        "session-id": "s",
        "boundary": "step-start",
        "working-set": {"element": [{"reuse-key": "ctx"}, {"reuse-key": "plan"}]},
    }
    assert exchange_line("step-boundary", boundary, {}, None) == (
        "step-boundary step-start (working set: ctx, plan): ok"
    )
    charged = {
        "scope": "step",
        "consumption": [
            {"dimension": f"{AS}:time", "amount": "4600"},
            {"dimension": f"{AS}:cost", "amount": "0.1", "currency": "EUR"},
        ],
    }
    assert exchange_line("accounting-feedback", charged, {}, None) == (
        "accounting-feedback step: time 4600, cost 0.1 EUR: ok"
    )
    submitted = {"descriptor": {}, "trigger": f"{AS}:t1-step-boundary"}
    assert exchange_line("submit-descriptor", submitted, None, "refused") == (
        "submit-descriptor at t1-step-boundary: FAILED: refused"
    )
    assert exchange_line(
        "invalidation-notice", {"condition": f"{AS}:step-overrun"}, {"acted-on": False}, None
    ).endswith(": not acted on")
