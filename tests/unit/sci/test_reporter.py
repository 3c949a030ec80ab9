"""Reporting Interface loop over a real runtime, with a recording sender (no sockets)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from agents.common.sequence import SequenceStore
from agents.sci.config import parse_config
from agents.sci.errors import refused
from agents.sci.reporter import Reporter
from agents.sci.runtime import Runtime
from agents.sci.values import CheckResult, CheckType, SiId
from controller.model import Schema
from controller.types import Json
from tests.unit.sci.test_config import MINIMAL

PASS = (CheckResult(CheckType.LIVENESS, passed=True), CheckResult(CheckType.READINESS, passed=True))
FAIL = CheckResult(CheckType.LIVENESS, passed=False, reason="refused")


def _config() -> Json:
    document: Json = json.loads(json.dumps(MINIMAL))
    sci = document["ietf-cats-sci:sci"]
    sci["service-instance"].append({"si-id": "b", "address": "127.0.0.1", "max-capacity": 6})
    sci["reporting"] = {"heartbeat-interval-ms": 10_000, "rate-limit": {"min-interval-ms": 1000}}
    sci["aggregation"] = {"health-batch-window-ms": 0}
    return document


class Recorder:
    """A C-SMA stand-in at the ``Send`` seam: accepts or refuses."""

    def __init__(self) -> None:
        self.reports: list[Json] = []
        self.refuse = False

    def __call__(self, members: Json) -> int:
        if self.refuse:
            raise refused("C-SMA unreachable", tag="operation-failed")
        self.reports.append(members)
        return int(members["sequence-number"])


def _healthy(runtime: Runtime, at: float) -> None:
    for si_id in ("a", "b"):
        for _ in range(2):
            for check in PASS:
                runtime.record_check(SiId(si_id), check, at)


def _setup(tmp_path: Path, schema: Schema) -> tuple[Runtime, Reporter, Recorder]:
    runtime = Runtime(parse_config(_config()), now=0.0)
    recorder = Recorder()
    return runtime, Reporter(runtime, SequenceStore(tmp_path), recorder, schema), recorder


def test_heartbeat_threshold_and_event_reports(tmp_path: Path, schema: Schema) -> None:
    runtime, reporter, recorder = _setup(tmp_path, schema)
    assert reporter.tick(0.0) == "heartbeat"  # first report: all UNKNOWN, GAS 0
    assert recorder.reports[0]["gas"] == 0
    _healthy(runtime, 0.5)
    assert reporter.tick(0.6) is None  # rate-limited (min-interval 1 s)
    assert reporter.tick(1.1) == "threshold"
    assert recorder.reports[-1]["gas"] == 10
    assert reporter.tick(5.0) is None
    for _ in range(3):
        runtime.record_check(SiId("a"), FAIL, 6.0)
    assert reporter.tick(7.0) == "threshold"  # a is UNHEALTHY: health change, GAS 10 -> 6
    assert recorder.reports[-1]["gas"] == 6
    for _ in range(2):
        runtime.record_check(SiId("a"), PASS[0], 8.0)
    assert reporter.tick(8.1) == "event"  # recovered from UNHEALTHY to HEALTHY
    assert "ietf-cats-sci:instance-recovered" in recorder.reports[-1]["trigger"]
    assert reporter.tick(20.0) == "heartbeat"
    assert (reporter.counts["heartbeat"], reporter.counts["threshold"]) == (2, 2)
    assert (reporter.counts["event"], reporter.counts["rate-limited"]) == (1, 1)
    sequences = [int(r["sequence-number"]) for r in recorder.reports]
    assert sequences == sorted(set(sequences))  # strictly increasing


def test_a_failed_delivery_is_counted_and_the_next_report_goes(
    tmp_path: Path, schema: Schema
) -> None:
    _, reporter, recorder = _setup(tmp_path, schema)
    recorder.refuse = True
    assert reporter.tick(0.0) is None
    assert reporter.counts["failed"] == 1
    recorder.refuse = False
    assert reporter.tick(1.5) == "heartbeat"  # still due


def test_a_report_the_schema_refuses_is_not_sent(tmp_path: Path, schema: Schema) -> None:
    runtime, reporter, recorder = _setup(tmp_path, schema)
    broken = parse_config(_config())
    runtime.config = replace(broken, optional_metrics={"reputation": 11})  # out of range
    assert reporter.tick(0.0) is None
    assert (reporter.counts["failed"], recorder.reports) == (1, [])
