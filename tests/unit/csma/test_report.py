"""agents.csma.report: what the C-SMA sends validates against ietf-cats-service-metrics."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

from agents.csma.report import freshness_seconds, sci_metrics, service_report
from agents.csma.thresholds import Plan, ReportType
from agents.csma.values import Confidence, Health
from controller.model import InstanceKind, Schema
from tests.unit.csma.values import entry

AT = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _validate(schema: Schema, members: dict[str, object]) -> None:
    document = {"ietf-cats-service-metrics:report-service-metrics": members}
    schema.validate(json.dumps(document), InstanceKind.RPC)


def test_full_delta_and_heartbeat_reports_validate(schema: Schema) -> None:
    aggregated = replace(entry("SS3", 400), aggregated=True, price=5, source="site:SS3")
    for planned in (
        Plan(ReportType.FULL, (entry("10.0.0.1:80", 40, "21.5"), aggregated)),
        Plan(ReportType.DELTA, (entry("a", 0, health=Health.UNKNOWN),)),
        Plan(ReportType.HEARTBEAT),
    ):
        members = service_report(7, AT, planned, "SS3", 6000)
        _validate(schema, members)
        assert members["report-type"] == planned.kind.value
    heartbeat = service_report(8, AT, Plan(ReportType.HEARTBEAT), "SS3", 6000)
    assert "entry" not in heartbeat


def test_an_estimated_computing_time_is_reported_as_estimated(schema: Schema) -> None:
    estimated = replace(entry("a", 40, "45.5"), confidence=Confidence.ESTIMATED)
    derived = replace(entry("SS3", 400), aggregated=True, confidence=Confidence.DERIVED)
    members = service_report(7, AT, Plan(ReportType.FULL, (estimated, derived)), "SS3", 6000)
    _validate(schema, members)
    confidences = {e["csci-id"]: e["confidence"] for e in members["entry"]}
    assert confidences == {"a": "estimated", "SS3": "derived"}
    assert members["entry"][0]["computing-time"] == "45.500"


def test_an_sci_report_reads_into_the_cache_values() -> None:
    members = {
        "csci-id": "10.0.0.1:80",
        "cs-id": "ARS",
        "timestamp": "2026-11-30T12:00:00.000Z",
        "sequence-number": "9",
        "report-kind": "threshold",
        "gas": 12,
        "computing-time": {"value": "21.500"},
        "health-summary": {"healthy": 0, "degraded": 2, "unhealthy": 1},
        "optional-metrics": {"cost": 5, "reputation": 8, "security-label": 7},
        "freshness-bound": "6000.000",
    }
    read = sci_metrics(members)
    assert (read.gas, read.computing_time, read.health) == (12, Decimal("21.5"), Health.DEGRADED)
    assert (read.price, read.reputation, read.security_level) == (5, 8, 7)
    assert freshness_seconds(members) == 6.0
