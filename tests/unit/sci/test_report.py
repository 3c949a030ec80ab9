"""The Table 1 report message: built from values, valid against ietf-cats-sci (7.3)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from agents.sci.aggregator import ComputingTime
from agents.sci.config import parse_config
from agents.sci.health import Transition
from agents.sci.report import (
    InstanceDetail,
    ReportContent,
    build_report,
    envelope,
    health_notification,
    rfc3339,
)
from agents.sci.values import CheckType, Health, InstanceMetrics, SiId
from controller.model import InstanceKind, ModelError, Schema
from tests.conftest import EXAMPLES_DIR

CONFIG = parse_config(json.loads((EXAMPLES_DIR / "sci-config.data.json").read_text()))
CT = ComputingTime(6.0, "load-weighted-mean", 10_000.0, 6.0, 3.2, 14.8, 95.0, 9.5, 120)
METRICS = InstanceMetrics(
    collected_at=1_796_000_000.0,
    cpu=41.5,
    memory=58.0,
    queue_depth=2,
    response_time_ms=5.6,
    response_time_p95_ms=8.9,
    throughput=180.0,
    error_rate=0.1,
    active_sessions=75,
    load_average=3.2,
)
DETAILS = (
    InstanceDetail(SiId("ars-1"), Health.HEALTHY, 375, 300, 75, METRICS),
    InstanceDetail(SiId("ars-2"), Health.HEALTHY, 375, 330, 45, None),
    InstanceDetail(SiId("ars-3"), Health.DEGRADED, 250, 120, 5, None),
)
CONTENT = ReportContent(
    1_796_000_000.5, 1042, "heartbeat", frozenset({"periodic-heartbeat"}), 600, CT, DETAILS
)


def _valid(schema: Schema, members: dict[str, object]) -> None:
    schema.validate(json.dumps(envelope(members)), InstanceKind.RPC)


def test_a_heartbeat_report_carries_every_table_1_field(schema: Schema) -> None:
    members = build_report(CONFIG, CONTENT)
    _valid(schema, members)
    assert (members["csci-id"], members["cs-id"], members["gas"]) == ("188.3.67.4:69", "ARS", 600)
    assert members["timestamp"] == rfc3339(CONTENT.at) == "2026-11-30T00:53:20.500Z"
    assert members["sequence-number"] == "1042"
    assert members["health-summary"] == {"healthy": 2, "degraded": 1, "unhealthy": 0, "unknown": 0}
    assert members["computing-time"]["value"] == "6.000"
    assert members["optional-metrics"] == {"cost": 5, "reputation": 8, "security-label": 7}
    assert [i["available-slots"] for i in members["instance"]] == [300, 330, 120]
    assert members["freshness-bound"] == "180000.000"


@pytest.mark.parametrize("estimator", ["mean", "percentile", "trend-adjusted"])
def test_every_estimator_validates(schema: Schema, estimator: str) -> None:
    content = replace(CONTENT, computing_time=replace(CT, estimator=estimator))
    members = build_report(CONFIG, content)
    _valid(schema, members)
    assert ("rank" in members["computing-time"]) == (estimator == "percentile")


def test_unknown_computing_time_and_all_unhealthy_event(schema: Schema) -> None:
    down = tuple(replace(d, health=Health.UNHEALTHY, available_slots=0) for d in DETAILS)
    content = replace(
        CONTENT,
        kind="event",
        triggers=frozenset({"all-instances-unhealthy"}),
        gas=0,
        computing_time=None,
        instances=down,
    )
    members = build_report(CONFIG, content)
    _valid(schema, members)
    assert "computing-time" not in members


def test_the_schema_refuses_an_inconsistent_report(schema: Schema) -> None:
    """GAS with no serving instance breaks the module's must: the builder never does this."""
    down = tuple(replace(d, health=Health.UNHEALTHY) for d in DETAILS)
    members = build_report(CONFIG, replace(CONTENT, instances=down))
    with pytest.raises(ModelError, match="GAS must be 0"):
        _valid(schema, members)


def test_without_instance_details_nothing_internal_is_reported(schema: Schema) -> None:
    config = replace(CONFIG, reporting=replace(CONFIG.reporting, include_instance_details=False))
    members = build_report(config, CONTENT)
    _valid(schema, members)
    assert "instance" not in members
    assert "10.3.0.11" not in json.dumps(members)


def test_the_health_notification_validates(schema: Schema) -> None:
    change = Transition(Health.HEALTHY, Health.UNHEALTHY, CheckType.LIVENESS, 3, "refused")
    document = health_notification(CONFIG, SiId("ars-1"), change, 0)
    schema.validate(json.dumps(document), InstanceKind.NOTIF)
    assert document["ietf-cats-sci:instance-health-changed"]["consecutive-results"] == 3
