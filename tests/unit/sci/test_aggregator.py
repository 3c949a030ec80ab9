"""Metric Aggregator: the draft's GAS and Computing Time formulas (sci-implementation 4.3, 5.3)."""

from __future__ import annotations

import pytest

from agents.sci.aggregator import (
    InstanceLoad,
    available_slots,
    computing_time,
    gas,
    weighted_percentile,
)
from agents.sci.config import AggregationSettings
from agents.sci.values import Health, Sample, SiId

DRAFT = AggregationSettings(safety_margin=80.0, degradation_factor=50.0)
A, B, C = SiId("ars-1"), SiId("ars-2"), SiId("ars-3")


def test_gas_is_the_sum_of_free_capacity_times_the_safety_margin() -> None:
    """The example report: 375-75 + 375-45 + (250 * 50 % - 5) = 750, times 80 % = 600."""
    loads = [
        InstanceLoad(A, Health.HEALTHY, 375, 75),
        InstanceLoad(B, Health.HEALTHY, 375, 45),
        InstanceLoad(C, Health.DEGRADED, 250, 5),
    ]
    assert [available_slots(load, 50.0) for load in loads] == [300, 330, 120]
    assert gas(loads, DRAFT) == 600


def test_unhealthy_unknown_and_drained_instances_contribute_nothing() -> None:
    loads = [
        InstanceLoad(A, Health.HEALTHY, 100, 10),
        InstanceLoad(B, Health.UNHEALTHY, 100, 0),
        InstanceLoad(C, Health.UNKNOWN, 100, 0),
        InstanceLoad(SiId("d"), Health.HEALTHY, 100, 0, in_service=False),
    ]
    assert gas(loads, AggregationSettings()) == 90
    assert gas(loads, DRAFT) == 72


def test_degradation_reduces_max_capacity_not_the_free_slots() -> None:
    """5.3: a DEGRADED instance's max_capacity is reduced; its sessions still count."""
    assert available_slots(InstanceLoad(A, Health.DEGRADED, 100, 30), 50.0) == 20
    assert available_slots(InstanceLoad(A, Health.DEGRADED, 100, 60), 50.0) == 0
    assert available_slots(InstanceLoad(A, Health.DEGRADED, 100, 0), 100.0) == 0


def test_gas_rounds_down_and_is_never_negative() -> None:
    assert gas([InstanceLoad(A, Health.HEALTHY, 3, 0)], DRAFT) == 2  # 2.4
    assert gas([InstanceLoad(A, Health.HEALTHY, 3, 9)], DRAFT) == 0


def _samples(si_id: SiId, values: list[float], at: float = 100.0) -> list[Sample]:
    return [Sample(at, si_id, value, ok=True) for value in values]


def test_computing_time_is_the_load_weighted_mean_with_p95() -> None:
    samples = _samples(A, [10.0] * 19 + [50.0]) + _samples(B, [20.0] * 5)
    health = {A: Health.HEALTHY, B: Health.HEALTHY}
    ct = computing_time(samples, health, AggregationSettings(), now=101.0)
    assert ct is not None
    assert ct.value == pytest.approx((19 * 10 + 50 + 5 * 20) / 25)
    assert (ct.minimum, ct.maximum, ct.rank, ct.samples) == (10.0, 50.0, 95.0, 25)
    assert ct.at_rank == 20.0  # 24th of 25 ordered values
    assert not ct.is_percentile


def test_computing_time_excludes_unhealthy_and_weights_degraded_lower() -> None:
    """5.3: recalculated without UNHEALTHY instances, DEGRADED ones weighted lower."""
    samples = _samples(A, [10.0, 10.0]) + _samples(B, [40.0, 40.0]) + _samples(C, [999.0])
    health = {A: Health.HEALTHY, B: Health.DEGRADED, C: Health.UNHEALTHY}
    ct = computing_time(samples, health, AggregationSettings(degraded_weight=50.0), now=100.0)
    assert ct is not None
    assert ct.value == pytest.approx((2 * 10 + 2 * 0.5 * 40) / (2 + 1))  # 20 ms
    assert ct.maximum == 40.0


def test_percentile_and_instance_mean_estimators() -> None:
    samples = _samples(A, [float(n) for n in range(1, 101)]) + _samples(B, [500.0])
    health = {A: Health.HEALTHY, B: Health.HEALTHY}
    p95 = computing_time(samples, health, AggregationSettings(estimator="percentile"), 100.0)
    assert p95 is not None
    assert p95.is_percentile
    assert p95.value == 96.0  # nearest rank of 101 values
    mean = computing_time(samples, health, AggregationSettings(estimator="mean"), 100.0)
    assert mean is not None
    assert mean.value == pytest.approx((50.5 + 500.0) / 2)  # every instance counts once


def test_samples_outside_the_window_and_failures_do_not_count() -> None:
    samples = [
        Sample(80.0, A, 500.0, ok=True),  # older than the 10 s window
        Sample(99.0, A, 0.0, ok=False),
        Sample(99.5, A, 12.0, ok=True),
    ]
    ct = computing_time(samples, {A: Health.HEALTHY}, AggregationSettings(), now=100.0)
    assert ct is not None
    assert (ct.value, ct.samples, ct.window_ms) == (12.0, 1, 10_000.0)
    assert computing_time(samples[:2], {A: Health.HEALTHY}, AggregationSettings(), 100.0) is None


def test_weighted_percentile_uses_weights() -> None:
    assert weighted_percentile([(1.0, 1.0), (2.0, 3.0)], 50) == 2.0
    assert weighted_percentile([(1.0, 3.0), (2.0, 1.0)], 50) == 1.0
