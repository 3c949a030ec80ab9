"""agents.csma.reporter against a fake C-PS at the ``Transport`` seam (no sockets)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agents.common.restconf import RefusedError, UnreachableError
from agents.common.sequence import SequenceStore
from agents.csma.config import Reporting
from agents.csma.reporter import Reporter
from agents.csma.values import Entry, EntryKey
from controller.errors import ErrorItem, ErrorType
from controller.types import Json
from tests.unit.csma.values import entry

QUIET = Reporting(interval=1.0, heartbeat=3600.0)


@dataclass
class FakeCps:
    """Records each report; ``fail`` holds exceptions to raise for the next calls."""

    reports: list[Json] = field(default_factory=list)
    fail: list[Exception] = field(default_factory=list)

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        assert (module, operation) == ("ietf-cats-service-metrics", "report-service-metrics")
        if self.fail:
            raise self.fail.pop(0)
        self.reports.append(members)
        return {"accepted-entries": len(members.get("entry", ()))}

    def close(self) -> None:
        pass


@dataclass
class Site:
    """The entries the reporter sees."""

    entries: dict[EntryKey, Entry] = field(default_factory=dict)

    def set(self, *entries: Entry) -> None:
        self.entries = {e.key: e for e in entries}


def make(tmp_path: Path, cps: FakeCps, site: Site, reporting: Reporting = QUIET) -> Reporter:
    return Reporter(reporting, "SS1", lambda: site.entries, cps, SequenceStore(tmp_path))


def test_full_at_start_then_deltas_of_what_crossed_a_threshold(tmp_path: Path) -> None:
    cps, site = FakeCps(), Site()
    site.set(entry("a", 100), entry("b", 100))
    reporter = make(tmp_path, cps, site)
    reporter.tick()
    site.set(entry("a", 105), entry("b", 100))  # 5 %: below the thresholds
    reporter.tick()
    site.set(entry("a", 105), entry("b", 50))
    reporter.tick()
    kinds = [(r["report-type"], [e["csci-id"] for e in r["entry"]]) for r in cps.reports]
    assert kinds == [("full", ["a", "b"]), ("delta", ["b"])]
    assert all(r["site"] == "SS1" for r in cps.reports)
    numbers = [int(r["sequence-number"]) for r in cps.reports]
    assert numbers == sorted(set(numbers))
    assert (reporter.counters.full, reporter.counters.delta) == (1, 1)


def test_the_default_heartbeat_refreshes_the_current_values(tmp_path: Path) -> None:
    """service-metrics-op 6.1, 8: a change below every threshold (GAS 100 to 95) reaches the
    C-PS at the next heartbeat, which carries the current values by default."""
    cps, site = FakeCps(), Site()
    site.set(entry("a", 100))
    reporter = make(tmp_path, cps, site, Reporting(heartbeat=1e-9))
    reporter.tick()
    site.set(entry("a", 95))
    reporter.tick()
    assert [r["report-type"] for r in cps.reports] == ["full", "full"]
    assert [e["gas"] for e in cps.reports[1]["entry"]] == [95]


def test_a_heartbeat_only_kind_carries_no_entries(tmp_path: Path) -> None:
    cps, site = FakeCps(), Site()
    site.set(entry("a", 100))
    reporter = make(tmp_path, cps, site, Reporting(heartbeat=1e-9, heartbeat_full=False))
    reporter.tick()
    reporter.tick()
    assert [r["report-type"] for r in cps.reports] == ["full", "heartbeat"]
    assert "entry" not in cps.reports[1]


def test_an_unreachable_cps_backs_off_and_then_gets_a_full_report(tmp_path: Path) -> None:
    unreachable = UnreachableError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", "refused"))
    cps, site = FakeCps(fail=[unreachable, unreachable]), Site()
    site.set(entry("a", 100))
    reporter = make(tmp_path, cps, site)
    reporter.tick()
    reporter.tick()
    assert reporter.counters.unreachable == 2
    reporter.tick()
    reporter.tick()
    assert [r["report-type"] for r in cps.reports] == ["full"]


def test_a_refused_report_is_logged_and_offered_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    item = ErrorItem(
        ErrorType.APPLICATION, "operation-failed", "not above 99", app_tag="sequence-not-increasing"
    )
    cps, site = FakeCps(fail=[RefusedError(400, item)]), Site()
    site.set(entry("a", 100))
    reporter = make(tmp_path, cps, site)
    with caplog.at_level(logging.ERROR, "agents.csma.reporter"):
        reporter.tick()
    assert "not above 99" in caplog.text
    reporter.tick()
    assert [r["report-type"] for r in cps.reports] == ["full"]


def test_a_restarted_reporter_resumes_with_a_higher_sequence_number(tmp_path: Path) -> None:
    cps, site = FakeCps(), Site()
    site.set(entry("a", 100))
    make(tmp_path, cps, site).tick()
    make(tmp_path, cps, site).tick()
    first, second = (int(r["sequence-number"]) for r in cps.reports)
    assert second > first
