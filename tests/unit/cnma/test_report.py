"""Change detection and report-network-metrics input (service-metrics-op 6.2.2, 8)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from agents.cnma.config import CnmaConfig, DelayUnit, Thresholds
from agents.cnma.paths import PathKey, PathMetrics, network_service_table
from agents.cnma.report import (
    MODULE,
    OPERATION,
    Metadata,
    Plan,
    ReportType,
    hex_string,
    network_report,
    plan,
    rpc_document,
    significant,
)
from controller.model import InstanceKind, ModelError, Schema
from controller.selection.units import Micros

WHEN = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
META = Metadata(WHEN, Micros(180_000_000), "cnma-7.1")
NONE = Thresholds()


def table(example: CnmaConfig) -> dict[PathKey, PathMetrics]:
    return network_service_table(example.topology, example.policy)


def validate(schema: Schema, members: Mapping[str, object]) -> None:
    schema.validate(json.dumps(rpc_document(MODULE, OPERATION, members)), InstanceKind.RPC)


def test_first_report_heartbeat_and_withdrawal_are_full(example: CnmaConfig) -> None:
    current = table(example)
    first = plan(None, current, NONE, heartbeat_due=False)
    assert first is not None
    assert first.kind is ReportType.FULL
    assert len(first.paths) == 2
    assert plan(current, current, NONE, heartbeat_due=False) is None
    beat = plan(current, current, NONE, heartbeat_due=True)
    assert beat is not None
    assert beat.kind is ReportType.FULL
    assert len(beat.paths) == 2
    fewer = dict(list(current.items())[:1])
    gone = plan(current, fewer, NONE, heartbeat_due=False)
    assert gone is not None
    assert gone.kind is ReportType.FULL
    assert len(gone.paths) == 1


def test_delta_carries_only_changed_paths(example: CnmaConfig) -> None:
    previous = table(example)
    key = next(k for k in previous if k[1] == "188.3.67.3")
    current = dict(previous) | {key: replace(previous[key], delay=Micros(9000))}
    delta = plan(previous, current, NONE, heartbeat_due=False)
    assert delta == Plan(ReportType.DELTA, (current[key],))
    assert delta.acknowledged(previous) == current


def test_thresholds_suppress_small_changes(example: CnmaConfig) -> None:
    old = next(iter(table(example).values()))
    thresholds = Thresholds(Micros(500), Decimal(5), Micros(200), Decimal(10), 100)
    assert not significant(old, replace(old, delay=Micros(old.delay + 400)), thresholds)
    assert significant(old, replace(old, delay=Micros(old.delay + 501)), thresholds)
    assert not significant(old, replace(old, jitter=Micros(old.jitter + 200)), thresholds)
    assert not significant(old, replace(old, loss_ppm=old.loss_ppm + 100), thresholds)
    assert significant(old, replace(old, loss_ppm=old.loss_ppm + 101), thresholds)
    assert old.bandwidth is not None
    assert not significant(old, replace(old, bandwidth=old.bandwidth + 50), thresholds)
    assert significant(old, replace(old, bandwidth=old.bandwidth // 2), thresholds)
    assert significant(old, replace(old, bandwidth=None), thresholds)
    assert significant(old, replace(old, color=7), thresholds)
    assert significant(old, replace(old, measured=True), thresholds)


def test_relative_delay_threshold_applies_with_the_absolute_one(example: CnmaConfig) -> None:
    old = next(iter(table(example).values()))  # 8 ms
    thresholds = Thresholds(delay_absolute=Micros(100), delay_relative=Decimal(10))
    assert not significant(old, replace(old, delay=Micros(8700)), thresholds)  # 8.75 % < 10 %
    assert significant(old, replace(old, delay=Micros(8900)), thresholds)


def test_full_report_in_milliseconds_validates(example: CnmaConfig, schema: Schema) -> None:
    full = plan(None, table(example), NONE, heartbeat_due=False)
    assert full is not None
    members = network_report(41, WHEN, full, DelayUnit.MS, META)
    validate(schema, members)
    assert members["sequence-number"] == "41"
    assert members["report-type"] == "full"
    cf2, cf3 = members["path"]
    assert (cf2["egress"], cf2["delay"], cf2["jitter"]) == ("188.3.67.3", "8.000", "0.400")
    assert (cf2["bandwidth"], cf2["loss-rate"]) == (1000, 110)
    assert cf2["path-attributes"] == {
        "admin-group": "00:00:00:05",
        "color": 100,
        "te-metric": 30,
        "igp-metric": 20,
        "min-delay": "7.500",
        "max-delay": "9.000",
        "hop-count": 2,
    }
    assert (cf2["source"], cf2["confidence"], cf2["freshness-bound"]) == (
        "cnma-7.1",
        "derived",
        "180000.000",
    )
    assert (cf3["egress"], cf3["delay"]) == ("188.3.67.4", "6.000")


def test_microsecond_report_validates(example: CnmaConfig, schema: Schema) -> None:
    paths = tuple(table(example).values())
    measured = replace(paths[1], measured=True, anomalous=True)
    members = network_report(7, WHEN, Plan(ReportType.DELTA, (measured,)), DelayUnit.US, META)
    validate(schema, members)
    (path,) = members["path"]
    assert (path["delay-us"], path["jitter-us"]) == (6000, 300)
    assert "delay" not in path
    assert path["confidence"] == "asserted"
    assert path["path-attributes"]["anomalous"] is True


def test_empty_full_report_validates(schema: Schema) -> None:
    members = network_report(8, WHEN, Plan(ReportType.FULL, ()), DelayUnit.MS, META)
    validate(schema, members)
    assert "path" not in members


def test_schema_refuses_what_the_builder_must_not_produce(schema: Schema) -> None:
    members = {"sequence-number": "1", "timestamp": WHEN.isoformat(), "path": [{"ingress": "a"}]}
    with pytest.raises(ModelError):
        validate(schema, members)


@pytest.mark.parametrize(
    ("mask", "text"),
    [
        (0, "00:00:00:00"),
        (0x5, "00:00:00:05"),
        (2**32 - 1, "ff:ff:ff:ff"),
        (2**32, "00:00:00:01:00:00:00:00"),
    ],
)
def test_admin_group_is_whole_32_bit_words(mask: int, text: str) -> None:
    assert hex_string(mask) == text
