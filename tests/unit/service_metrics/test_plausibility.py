"""report-session-feedback and the plausibility checks of service-metrics-op section 9, on a
real ServiceMetrics: observed values, flags at their exact thresholds, the feedback limit and
the flagged-entry penalty in ranking."""

from __future__ import annotations

from collections import deque
from decimal import Decimal
from typing import Any

import pytest

from controller.datastore.api import Principal
from controller.errors import CatsError
from controller.selection.joint import Micros, NstEntry, from_ms
from controller.service_metrics.plausibility import (
    Flag,
    PlausibilitySettings,
    Sample,
    judge,
    plausibility_settings,
)
from controller.types import CsciId, ForwarderId, Json
from tests.unit.service_metrics.test_service import T0
from tests.unit.service_metrics.test_sessions import ARS, SCI1, SCI3, SM, Built

GATEWAY = Principal("gateway")


def feedback(built: Built, session: str | None, outcome: str = "completed", **more: Any) -> Json:
    members: Json = {"cs-id": "ARS", "csci-id": SCI3, "outcome": outcome, **more}
    if session is not None:
        members["session-id"] = session
    return built.service.report_session_feedback(GATEWAY, members)


def observed(built: Built, csci: str = SCI3) -> Json | None:
    return built.service._observed_json((ARS, CsciId(csci)))  # the ingest's seam


def test_settings_take_the_yang_defaults() -> None:
    assert plausibility_settings({}) == PlausibilitySettings(Decimal(50), Decimal(90), 20, 1.0, 1)


def test_response_times_counters_and_no_flag_below_min_samples() -> None:
    built = Built(plausibility={"min-feedback-samples": 3})
    built.select("s1")
    assert observed(built) == {
        "feedback-count": "0",
        "sessions-steered": "1",
        "sessions-refused": "0",
    }
    assert observed(built, SCI1) is None
    assert feedback(built, "s1", **{"response-time": "30"}) == {}
    feedback(built, "s2", **{"response-time": "40.5"})
    assert observed(built) == {
        "response-time": {"cur": "40.500", "mean": "35.250", "min": "30.000", "max": "40.500"},
        "feedback-count": "2",
        "sessions-steered": "1",
        "sessions-refused": "0",
    }  # far above 12 ms, but two samples do not judge


def test_computing_time_under_reported_above_the_deviation() -> None:
    """Reported 6 ms + 6 ms network: flagged above 12 x 1.5 = 18 ms on average."""
    built = Built(plausibility={"min-feedback-samples": 3})
    for number, time in enumerate(("18", "18", "18")):
        feedback(built, f"s{number}", **{"response-time": time})
    assert "flag" not in (observed(built) or {})
    feedback(built, "s3", **{"response-time": "18.004"})  # mean 18.001
    assert (observed(built) or {})["flag"] == [f"{SM}:computing-time-under-reported"]


@pytest.mark.parametrize(
    ("session", "time", "flagged"),
    [
        # the session's ingress: 6 + 6 ms
        ("s1", "12", False),
        ("s1", "12.001", True),
        # unknown: the farthest, 6 + 30 ms
        ("other", "36", False),
        ("other", "36.001", True),
    ],
)
def test_the_network_delay_is_that_of_the_session_ingress(
    session: str, time: str, *, flagged: bool
) -> None:
    built = Built(plausibility={"min-feedback-samples": 1, "computing-time-deviation": 0})
    far = NstEntry(ForwarderId("10.0.0.9"), ForwarderId("188.3.67.4"), from_ms(30), T0)
    built.service.index.put_nst(far)
    built.select("s1")
    feedback(built, session, **{"response-time": time})
    assert ("flag" in (observed(built) or {})) is flagged


def test_gas_not_honored_below_the_min_honored_ratio() -> None:
    built = Built(plausibility={"min-feedback-samples": 10, "max-feedback-per-session": 20})
    for _ in range(9):
        feedback(built, "s1")
    feedback(built, "s1", "refused")  # 9 of 10 honored = 90 %: not below
    assert "flag" not in (observed(built) or {})
    feedback(built, "s1", "refused")  # 9 of 11
    found = observed(built) or {}
    assert found["flag"] == [f"{SM}:gas-not-honored"]
    assert (found["feedback-count"], found["sessions-refused"]) == ("11", "2")


def test_flags_are_judged_again_when_the_thresholds_change() -> None:
    window = deque([Sample(honored=False)] + [Sample(honored=True)] * 4)
    assert judge(window, PlausibilitySettings(min_feedback_samples=5)) == (Flag.GAS_NOT_HONORED,)
    relaxed = PlausibilitySettings(min_feedback_samples=5, min_honored_ratio=Decimal(80))
    assert judge(window, relaxed) == ()
    assert judge(window, PlausibilitySettings(min_feedback_samples=6)) == ()
    timed = deque([Sample(honored=True, observed=Micros(151), expected=Micros(100))])
    assert judge(timed, PlausibilitySettings(min_feedback_samples=1)) == (
        Flag.COMPUTING_TIME_UNDER_REPORTED,
    )


def test_feedback_beyond_max_feedback_per_session_is_refused() -> None:
    built = Built()
    feedback(built, "s1", **{"response-time": "12"})
    with pytest.raises(CatsError) as caught:
        feedback(built, "s1", "refused")
    (error,) = caught.value.items
    assert (error.tag, error.app_tag) == ("resource-denied", "feedback-limit-reached")
    assert error.path == f"/{SM}:report-session-feedback/session-id"
    assert (observed(built) or {})["feedback-count"] == "1"
    feedback(built, None)
    with pytest.raises(CatsError):
        feedback(built, None)  # without a session, the requester is limited


def test_feedback_on_an_unknown_entry_is_refused() -> None:
    built = Built()
    with pytest.raises(CatsError) as caught:
        built.service.report_session_feedback(
            GATEWAY, {"cs-id": "VRS", "csci-id": SCI3, "outcome": "completed"}
        )
    (error,) = caught.value.items
    assert (error.tag, error.path) == ("invalid-value", f"/{SM}:report-session-feedback/csci-id")


def test_sessions_steered_counts_new_steering_only() -> None:
    built = Built()
    built.select("s1")
    built.select("s1")  # kept on its binding
    built.select(None, **{"dry-run": [None]})
    built.select()
    assert (observed(built) or {})["sessions-steered"] == "2"


def test_a_flagged_entry_is_penalized_and_can_lose() -> None:
    """SCI3 (TST 12, score 0) against SCI1 (TST 13, score 1): a penalty of 1.5 makes SCI1
    win by score, with the fast path and with the full evaluation."""
    settings = {"min-feedback-samples": 1, "flagged-entry-penalty": "1.5"}
    built = Built(plausibility=settings)
    assert built.select()["csci-id"] == SCI3
    feedback(built, "s1", "refused")
    full = built.select()
    assert (full["csci-id"], full["decided-by"]) == (SCI1, "score")
    scores = {c["csci-id"]: c["score"] for c in full["candidate"]}
    assert scores == {SCI1: "1.000000", SCI3: "1.500000"}
    assert built.select(**{"candidate-report": "examined"})["csci-id"] == SCI1
    assert built.select("s9")["csci-id"] == SCI1


def test_a_zero_penalty_changes_nothing() -> None:
    built = Built(plausibility={"min-feedback-samples": 1, "flagged-entry-penalty": "0"})
    feedback(built, "s1", "refused")
    assert (observed(built) or {})["flag"] == [f"{SM}:gas-not-honored"]
    assert built.select()["csci-id"] == SCI3


def test_a_removed_entry_forgets_its_observations() -> None:
    built = Built()
    feedback(built, "s1")
    built.service.index.remove_cst(ARS, SCI3)
    built.service.reroute([(ARS, SCI3)])
    assert observed(built) is None
