"""Decisions read from select-service replies and checked against expectations."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from controller.demo.expect import NOISE_MS, Decision, Expectation, check, judge

SM = "ietf-cats-service-metrics"
ONE, THREE = "127.3.67.3:20067", "127.3.67.4:20069"


def candidate(csci: str, ct: str, delay: str, tst: str, rank: int) -> dict[str, Any]:
    return {
        "csci-id": csci,
        "egress": "188.3.67.4",
        "gas": 600,
        "computing-time": ct,
        "network-delay": delay,
        "total-service-time": tst,
        "score": "0",
        "rank": rank,
    }


def reply(**changes: Any) -> dict[str, Any]:
    """Scenario A with measured values: SCI-3 at 7.4 + 6, SCI-1 at 6.7 + 8."""
    document = {
        "decision-id": "d-1",
        "result": "selected",
        "fallback-level": "none",
        "csci-id": THREE,
        "egress": "188.3.67.4",
        "total-service-time": "13.426",
        "decided-by": "score",
        "candidate": [
            candidate(THREE, "7.426", "6", "13.426", 1),
            candidate(ONE, "6.749", "8", "14.749", 2),
        ],
    }
    return document | changes


def test_a_decision_as_the_draft_says_passes() -> None:
    decision = Decision.from_json(reply())
    assert decision.tst == Decimal("13.426")
    assert decision.candidate(ONE) is not None
    expected = Expectation(winner=THREE, egress="188.3.67.4", feasible=(ONE, THREE))
    assert check(decision, expected) == ()


def test_another_winner_is_reported() -> None:
    expected = Expectation(winner=ONE, egress="188.3.67.3")
    assert check(Decision.from_json(reply()), expected) == (
        f"selected CSCI-ID is {THREE}, expected {ONE}",
        "egress is 188.3.67.4, expected 188.3.67.3",
    )


def test_a_tst_that_is_not_ct_plus_delay_is_reported() -> None:
    wrong = reply(candidate=[candidate(THREE, "7.426", "6", "13.5", 1)])
    assert check(Decision.from_json(wrong), Expectation()) == (
        f"{THREE}: TST 13.5 != 7.426 + 6",
        "the reply's TST 13.426 is not its candidate's 13.5",
    )


def test_exclusion_reasons_are_compared_without_the_module() -> None:
    excluded = {"csci-id": ONE, "gas": 0, "reason": f"{SM}:gas-exhausted", "detail": "GAS 0"}
    document = reply(
        result="egress-only", **{"fallback-level": "network-only"}, candidate=[excluded]
    )
    del document["csci-id"], document["total-service-time"], document["decided-by"]
    decision = Decision.from_json(document)
    assert decision.candidates[0].reason == "gas-exhausted"
    expected = Expectation(
        result="egress-only", fallback_level="network-only", excluded={ONE: "gas-exhausted"}
    )
    assert check(decision, expected) == ()
    assert check(decision, Expectation(excluded={ONE: "price-above-maximum"})) == (
        "result is egress-only, expected selected",
        "fallback level is network-only, expected none",
        f"{ONE} exclusion reason is gas-exhausted, expected price-above-maximum",
    )


def test_the_deciding_rule_and_a_missing_feasible_candidate() -> None:
    document = reply(**{"decided-by": "tie-break", "deciding-tie-break": f"{SM}:highest-gas"})
    decision = Decision.from_json(document)
    assert decision.deciding == "highest-gas"
    expected = Expectation(decided_by="tie-break", deciding="highest-gas", feasible=("nobody",))
    assert check(decision, expected) == ("nobody is not a feasible candidate",)


def test_measurements_inside_the_margin_are_checked_against_the_invariant() -> None:
    # SCI-1 measured 2 ms faster than SCI-3: 22.670 < 23.312, so the C-PS rightly picks it.
    inverted = reply(
        **{"csci-id": ONE, "total-service-time": "22.670"},
        candidate=[
            candidate(ONE, "14.670", "8", "22.670", 1),
            candidate(THREE, "17.312", "6", "23.312", 2),
        ],
    )
    expected = Expectation(
        winner=THREE, egress="188.3.67.4", feasible=(ONE, THREE), margin_ms=Decimal(1)
    )
    problems, note = judge(Decision.from_json(inverted), expected)
    assert problems == ()
    assert note is not None
    assert "checked the invariant" in note
    assert check(Decision.from_json(inverted), expected) != ()  # the draft's outcome alone


def test_the_invariant_fails_when_the_cps_did_not_pick_its_minimum() -> None:
    wrong = reply(
        **{"csci-id": ONE, "total-service-time": "24.000"},
        candidate=[
            candidate(ONE, "16.000", "8", "24.000", 1),
            candidate(THREE, "17.312", "6", "23.312", 2),
        ],
    )
    expected = Expectation(winner=THREE, feasible=(ONE, THREE), margin_ms=Decimal(1))
    problems, _ = judge(Decision.from_json(wrong), expected)
    assert any("though its record shows" in p for p in problems)


def test_within_the_margin_the_draft_is_still_checked_when_the_record_gives_it() -> None:
    expected = Expectation(
        winner=THREE, egress="188.3.67.4", feasible=(ONE, THREE), margin_ms=Decimal(1)
    )
    assert judge(Decision.from_json(reply()), expected) == ((), None)
    wrong_egress = reply(egress="188.3.67.3")
    problems, note = judge(Decision.from_json(wrong_egress), expected)
    assert note is None
    assert problems == ("egress is 188.3.67.3, expected 188.3.67.4",)


def test_equal_tsts_expected_but_not_recorded_fall_back_to_the_invariant() -> None:
    expected = Expectation(
        winner=THREE, decided_by="objective", deciding="maximize-gas", equal_tst=True
    )
    problems, note = judge(Decision.from_json(reply()), expected)
    assert problems == ()
    assert note is not None


def test_a_margin_the_scenario_contradicts_or_beyond_the_noise_is_checked_as_the_draft_says() -> (
    None
):
    # SCI-1 measured faster: the invariant would hold, but the margin is no excuse here.
    inverted = reply(
        **{"csci-id": ONE, "total-service-time": "22.670"},
        candidate=[
            candidate(ONE, "14.670", "8", "22.670", 1),
            candidate(THREE, "17.312", "6", "23.312", 2),
        ],
    )
    for margin in (NOISE_MS, Decimal(24)):
        expected = Expectation(winner=THREE, feasible=(ONE, THREE), margin_ms=margin)
        problems, note = judge(Decision.from_json(inverted), expected)
        assert note is None
        assert problems == (f"selected CSCI-ID is {ONE}, expected {THREE}",)


def test_a_margin_the_scenario_contradicts_fails_whatever_the_noise_made_the_cps_choose() -> None:
    expected = Expectation(winner=THREE, feasible=(ONE, THREE), margin_ms=Decimal(-1))
    contradiction = (
        "the scenario's numbers do not give the draft's outcome: by the draft's TSTs "
        "SCI-3 is 1 ms behind"
    )
    inverted = reply(
        **{"csci-id": ONE, "total-service-time": "22.670"},
        candidate=[
            candidate(ONE, "14.670", "8", "22.670", 1),
            candidate(THREE, "17.312", "6", "23.312", 2),
        ],
    )
    labels = {ONE: "SCI-1", THREE: "SCI-3"}
    for decided in (reply(), inverted):  # the draft's winner chosen, or the other one
        problems, note = judge(Decision.from_json(decided), expected, labels)
        assert (problems, note) == ((contradiction,), None)
    wrong = reply(
        **{"csci-id": ONE, "total-service-time": "24.000"},
        candidate=[
            candidate(ONE, "16.000", "8", "24.000", 1),
            candidate(THREE, "17.312", "6", "23.312", 2),
        ],
    )
    problems, _ = judge(Decision.from_json(wrong), expected, labels)
    assert problems[0] == contradiction
    assert any("though its record shows" in p for p in problems[1:])
