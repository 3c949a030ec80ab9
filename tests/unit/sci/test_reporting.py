"""Reporting Interface policy: thresholds, events, heartbeat and rate limit (7.2)."""

from __future__ import annotations

from agents.sci.config import ReportingSettings
from agents.sci.reporting import (
    Aggregate,
    RateWindow,
    Sent,
    decide,
    event_triggers,
    threshold_triggers,
)
from agents.sci.values import Health, SiId

A, B = SiId("a"), SiId("b")
DRAFT = ReportingSettings()  # 10 %, 50 slots, 20 %, heartbeat 60 s, min-interval 1 s
BOTH = ((A, Health.HEALTHY), (B, Health.HEALTHY))


def _agg(
    gas: int, ct: float | None = 10.0, health: tuple[tuple[SiId, Health], ...] = BOTH
) -> Aggregate:
    return Aggregate(gas, ct, health)


def test_gas_thresholds_of_the_draft() -> None:
    """GAS changes by more than 10 % or an absolute value of 50."""
    assert threshold_triggers(_agg(1000), _agg(1050), DRAFT) == frozenset()
    assert threshold_triggers(_agg(1000), _agg(1051), DRAFT) == {"gas-absolute-change"}
    assert threshold_triggers(_agg(1000), _agg(1101), DRAFT) == {
        "gas-absolute-change",
        "gas-relative-change",
    }
    assert threshold_triggers(_agg(100), _agg(111), DRAFT) == {"gas-relative-change"}
    assert threshold_triggers(_agg(0), _agg(1), DRAFT) == {"gas-relative-change"}


def test_computing_time_deviation_of_more_than_20_percent() -> None:
    assert threshold_triggers(_agg(10, 10.0), _agg(10, 12.0), DRAFT) == frozenset()
    assert threshold_triggers(_agg(10, 10.0), _agg(10, 12.1), DRAFT) == {"computing-time-deviation"}
    assert threshold_triggers(_agg(10, None), _agg(10, 5.0), DRAFT) == {"computing-time-deviation"}
    assert threshold_triggers(_agg(10, 5.0), _agg(10, None), DRAFT) == frozenset()


def test_health_change_and_events() -> None:
    down = ((A, Health.UNHEALTHY), (B, Health.UNHEALTHY))
    assert threshold_triggers(_agg(0, None, BOTH), _agg(0, None, down), DRAFT) == {
        "instance-health-change"
    }
    assert event_triggers(_agg(5), _agg(0, None, down), (), DRAFT) == {"all-instances-unhealthy"}
    assert event_triggers(None, _agg(0, None, down), (), DRAFT) == frozenset()
    assert event_triggers(_agg(0, None, down), _agg(5), (A,), DRAFT) == {"instance-recovered"}


def test_disabled_triggers_are_ignored() -> None:
    settings = ReportingSettings(triggers=frozenset({"computing-time-deviation"}))
    assert threshold_triggers(_agg(1000), _agg(2000), settings) == frozenset()


def test_heartbeat_then_nothing_until_due() -> None:
    assert decide(0.0, None, RateWindow(), frozenset(), DRAFT).kind == "heartbeat"
    sent = Sent(_agg(10), 0.0, 0.0)
    assert decide(30.0, sent, RateWindow((0.0,)), frozenset(), DRAFT).kind is None
    beat = decide(60.0, sent, RateWindow((0.0,)), frozenset(), DRAFT)
    assert (beat.kind, beat.triggers) == ("heartbeat", frozenset({"periodic-heartbeat"}))


def test_min_interval_limits_deltas_but_not_events() -> None:
    sent = Sent(_agg(10), 10.0, 10.0)
    window = RateWindow((10.0,))
    delta = decide(10.5, sent, window, frozenset({"gas-relative-change"}), DRAFT)
    assert (delta.kind, delta.rate_limited) == (None, True)
    assert decide(11.0, sent, window, frozenset({"gas-relative-change"}), DRAFT).kind == "threshold"
    event = decide(10.5, sent, window, frozenset({"instance-recovered"}), DRAFT)
    assert event.kind == "event"
    strict = ReportingSettings(events_exempt=False)
    assert decide(10.5, sent, window, frozenset({"instance-recovered"}), strict).kind is None


def test_max_reports_per_interval() -> None:
    settings = ReportingSettings(max_reports=3, rate_interval_ms=60_000, min_interval_ms=0)
    sent = Sent(_agg(10), 3.0, 0.0)
    window = RateWindow((1.0, 2.0, 3.0))
    trigger = frozenset({"instance-recovered"})
    assert decide(4.0, sent, window, trigger, settings).rate_limited
    assert decide(61.5, sent, window, trigger, settings).kind == "event"
    assert window.after(62.5, 60).times == (3.0, 62.5)
