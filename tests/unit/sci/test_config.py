"""SCI configuration: the example validates and parses; defaults match the module; a malformed
file is refused naming the path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.sci.config import (
    AffinitySettings,
    AggregationSettings,
    CollectionSettings,
    DispatchSettings,
    HealthSettings,
    Overrides,
    ReportingSettings,
    ResourceThreshold,
    load_config,
    parse_config,
)
from agents.sci.errors import SciError
from controller.model import Schema
from tests.conftest import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "sci.config.json"
MINIMAL: dict[str, Any] = {
    "ietf-cats-sci:sci": {
        "csci-id": "127.0.0.1:8000",
        "cs-id": "ARS",
        "client-interface": {"address": "127.0.0.1", "port": 8000},
        "c-sma": {"restconf-uri": "http://127.0.0.1:8080/restconf"},
        "service-instance": [{"si-id": "a", "address": "127.0.0.1", "max-capacity": 4}],
    }
}


def _write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "sci.json"
    path.write_text(json.dumps(document))
    return path


def test_the_documented_example_validates_and_parses(schema: Schema) -> None:
    _, config = load_config(EXAMPLE, schema)
    assert config.csci_id == f"{config.address}:{config.port}"
    assert config.instances
    assert config.restconf_uri is not None


def test_defaults_are_the_modules(schema: Schema, tmp_path: Path) -> None:
    _, config = load_config(_write(tmp_path, MINIMAL), schema)
    assert config.collection == CollectionSettings()
    assert config.health == HealthSettings()
    assert config.aggregation == AggregationSettings()
    assert config.dispatch == DispatchSettings()
    assert config.affinity == AffinitySettings()
    assert config.reporting == ReportingSettings()
    health, aggregation, reporting = config.health, config.aggregation, config.reporting
    dispatch = config.dispatch
    defaults = {
        "metric-collection/sampling-interval-ms": config.collection.sampling_interval_ms,
        "health-monitoring/liveness/interval-ms": health.liveness_interval_ms,
        "health-monitoring/liveness/timeout-ms": health.liveness_timeout_ms,
        "health-monitoring/readiness/interval-ms": health.readiness_interval_ms,
        "health-monitoring/readiness/timeout-ms": health.readiness_timeout_ms,
        "health-monitoring/performance/interval-ms": health.performance_interval_ms,
        "health-monitoring/performance/resource-threshold/duration-ms": ResourceThreshold(
            "cpu", 90.0
        ).duration_ms,
        "health-monitoring/hysteresis/failures-to-down": health.failures_to_down,
        "health-monitoring/hysteresis/passes-to-up": health.passes_to_up,
        "aggregation/safety-margin": aggregation.safety_margin,
        "aggregation/degradation-factor": aggregation.degradation_factor,
        "aggregation/degraded-weight": aggregation.degraded_weight,
        "aggregation/measurement-window-ms": aggregation.measurement_window_ms,
        "aggregation/health-batch-window-ms": aggregation.health_batch_window_ms,
        "dispatch/no-healthy-instance/reject-status": dispatch.reject_status,
        "dispatch/no-healthy-instance/queue-timeout-ms": dispatch.queue_timeout_ms,
        "affinity/binding-timeout-ms": config.affinity.binding_timeout_ms,
        "reporting/heartbeat-interval-ms": reporting.heartbeat_interval_ms,
        "reporting/freshness-multiplier": reporting.freshness_multiplier,
        "reporting/thresholds/gas-absolute": reporting.gas_absolute,
        "reporting/thresholds/gas-relative": reporting.gas_relative,
        "reporting/thresholds/computing-time-relative": reporting.computing_time_relative,
        "reporting/rate-limit/min-interval-ms": reporting.min_interval_ms,
        "reporting/rate-limit/interval-ms": reporting.rate_interval_ms,
    }
    for path, value in defaults.items():
        leaf: Any = next(schema.context.find_path(f"/ietf-cats-sci:sci/{path}"))
        assert float(leaf.default()) == float(value), path


def test_overrides_replace_the_listener_and_the_c_sma(schema: Schema, tmp_path: Path) -> None:
    overrides = Overrides(listen=("127.0.0.2", 9001), c_sma_url="http://127.0.0.1:1/restconf")
    _, config = load_config(_write(tmp_path, MINIMAL), schema, overrides)
    assert (config.address, config.port, config.csci_id) == ("127.0.0.2", 9001, "127.0.0.2:9001")
    assert config.restconf_uri == "http://127.0.0.1:1/restconf"


def test_a_schema_violation_names_the_file_and_the_path(schema: Schema, tmp_path: Path) -> None:
    bad = json.loads(json.dumps(MINIMAL))
    bad["ietf-cats-sci:sci"]["aggregation"] = {"safety-margin": "180.000"}
    path = _write(tmp_path, bad)
    with pytest.raises(SciError) as caught:
        load_config(path, schema)
    item = caught.value.items[0]
    assert str(path) in item.message
    assert item.path is not None
    assert "safety-margin" in item.path


@pytest.mark.parametrize("text", ["{not json", "[]", '{"other:x": {}}'])
def test_a_malformed_file_is_refused(schema: Schema, tmp_path: Path, text: str) -> None:
    path = tmp_path / "sci.json"
    path.write_text(text)
    with pytest.raises(SciError, match=r"sci\.json"):
        load_config(path, schema)


def test_identityrefs_lose_their_prefix() -> None:
    document = json.loads(json.dumps(MINIMAL))
    document["ietf-cats-sci:sci"]["dispatch"] = {"algorithm": "ietf-cats-sci:slot-based"}
    assert parse_config(document).dispatch.algorithm == "slot-based"


# Every configured duration of the module's first revision, in seconds or milliseconds under
# a name without "-ms": (the container it is in, the old member, an old value).
OLD_DURATIONS = [
    ({"metric-collection": {"sampling-interval": 5}}, "sampling-interval"),
    ({"health-monitoring": {"liveness": {"interval": 5}}}, "interval"),
    ({"health-monitoring": {"liveness": {"timeout": 2000}}}, "timeout"),
    ({"health-monitoring": {"readiness": {"interval": 30}}}, "interval"),
    ({"health-monitoring": {"readiness": {"timeout": 5000}}}, "timeout"),
    ({"health-monitoring": {"performance": {"interval": 30}}}, "interval"),
    (
        {
            "health-monitoring": {
                "performance": {
                    "resource-threshold": [
                        {"resource": "cpu", "utilization": "90.00", "duration": 30}
                    ]
                }
            }
        },
        "duration",
    ),
    ({"aggregation": {"measurement-window": 10}}, "measurement-window"),
    ({"aggregation": {"health-batch-window": 1000}}, "health-batch-window"),
    (
        {"dispatch": {"no-healthy-instance": {"action": "queue", "queue-timeout": 1000}}},
        "queue-timeout",
    ),
    ({"affinity": {"binding-timeout": 120}}, "binding-timeout"),
    ({"reporting": {"heartbeat-interval": 60}}, "heartbeat-interval"),
    ({"reporting": {"rate-limit": {"min-interval": 1000}}}, "min-interval"),
    ({"reporting": {"rate-limit": {"interval": 60}}}, "interval"),
]


@pytest.mark.parametrize(("members", "old"), OLD_DURATIONS)
def test_a_file_with_the_old_duration_names_is_refused_naming_the_node(
    schema: Schema, tmp_path: Path, members: dict[str, Any], old: str
) -> None:
    """A file of the first revision (seconds under names without "-ms") is refused, its old
    node named, rather than read a thousand times shorter (docs/yang-conventions.md)."""
    document = json.loads(json.dumps(MINIMAL))
    document["ietf-cats-sci:sci"] |= members
    path = _write(tmp_path, document)
    with pytest.raises(SciError) as caught:
        load_config(path, schema)
    (item,) = caught.value.items
    assert f'"{old}"' in item.message, item
    assert "not found" in item.message, item
    assert str(path) in item.message
