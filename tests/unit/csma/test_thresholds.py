"""agents.csma.thresholds: the delta-threshold rules of service-metrics-op 8."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from agents.csma.thresholds import Plan, ReportType, Thresholds, plan, significant
from agents.csma.values import Confidence, Entry, EntryKey, Health
from tests.unit.csma.values import entry, key

DEFAULT = Thresholds()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (entry("a", 400), entry("a", 451), True),  # > 50 slots
        (entry("a", 400), entry("a", 440), False),  # 40 slots, 10 %: not more than 10 %
        (entry("a", 100), entry("a", 111), True),  # 11 % of 100
        (entry("a", 100), entry("a", 110), False),  # exactly 10 %
        (entry("a", 5), entry("a", 0), True),  # withdrawal
        (entry("a", 0), entry("a", 1), True),  # restoration
        (entry("a", 100, "20"), entry("a", 100, "24"), False),  # exactly 20 %
        (entry("a", 100, "20"), entry("a", 100, "24.001"), True),
        (entry("a", 100), entry("a", 100, health=Health.DEGRADED), True),
        (entry("a", 10), entry("a", 9), True),  # a small site: one slot is 10 %, it counts
        (entry("a", 8), entry("a", 9), True),
        (entry("a", 15), entry("a", 14), False),  # 1.5 slots is the threshold: 2 needed
        (entry("a", 15), entry("a", 13), True),
    ],
)
def test_significant_follows_the_thresholds(old: Entry, new: Entry, *, expected: bool) -> None:
    assert significant(old, new, DEFAULT) is expected


def test_the_first_measurement_replacing_an_estimate_is_reported() -> None:
    estimated = replace(entry("a", 100, "20"), confidence=Confidence.ESTIMATED)
    assert significant(estimated, entry("a", 100, "20"), DEFAULT)
    assert not significant(estimated, estimated, DEFAULT)


def test_health_change_off_still_reports_a_change_of_usability() -> None:
    quiet = Thresholds(health_change=False)
    healthy = entry("a", 100)
    assert not significant(healthy, entry("a", 100, health=Health.DEGRADED), quiet)
    assert significant(healthy, entry("a", 100, health=Health.UNHEALTHY), quiet)


def test_thresholds_are_relative_to_the_acknowledged_values_so_drift_adds_up() -> None:
    acknowledged = {key("a"): entry("a", 100)}
    assert plan(acknowledged, {key("a"): entry("a", 106)}, DEFAULT, heartbeat_due=False) is None
    drifted = plan(acknowledged, {key("a"): entry("a", 112)}, DEFAULT, heartbeat_due=False)
    assert drifted == Plan(ReportType.DELTA, (entry("a", 112),))


def _keyed(*entries: Entry) -> dict[EntryKey, Entry]:
    return {e.key: e for e in entries}


def test_nothing_acknowledged_or_an_entry_gone_gives_a_full_report() -> None:
    current = _keyed(entry("a", 100))
    first = plan(None, current, DEFAULT, heartbeat_due=False)
    assert first == Plan(ReportType.FULL, (entry("a", 100),))
    gone = plan(_keyed(entry("a", 100), entry("b", 5)), current, DEFAULT, heartbeat_due=False)
    assert gone is not None
    assert gone.kind is ReportType.FULL


def test_the_heartbeat_is_a_heartbeat_report_unless_full_is_asked_or_changes_are_due() -> None:
    held = _keyed(entry("a", 100))
    assert plan(held, held, DEFAULT, heartbeat_due=True) == Plan(ReportType.HEARTBEAT)
    full = plan(held, held, DEFAULT, heartbeat_due=True, heartbeat_full=True)
    assert full is not None
    assert full.kind is ReportType.FULL
    changed = plan(held, _keyed(entry("a", 1)), DEFAULT, heartbeat_due=True)
    assert changed == Plan(ReportType.FULL, (entry("a", 1),))


def test_a_new_sci_is_a_delta_and_acknowledgement_merges_it() -> None:
    held = _keyed(entry("a", 100))
    planned = plan(held, _keyed(entry("a", 100), entry("b", 7)), DEFAULT, heartbeat_due=False)
    assert planned == Plan(ReportType.DELTA, (entry("b", 7),))
    assert set(planned.acknowledged(held)) == {key("a"), key("b")}


def test_thresholds_of_zero_report_every_change() -> None:
    eager = Thresholds(0, Decimal(0), Decimal(0))
    assert significant(entry("a", 100), entry("a", 101), eager)
    assert not significant(entry("a", 100), entry("a", 100), eager)
