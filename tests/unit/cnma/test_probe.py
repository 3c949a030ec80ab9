"""Probe statistics and their precedence over the modelled path metrics."""

from __future__ import annotations

from agents.cnma.config import CnmaConfig
from agents.cnma.paths import PathMetrics, network_service_table
from agents.cnma.probe import Measurement, ProbeUse, apply
from controller.types import ForwarderId

KEY = (ForwarderId("10.0.0.1"), ForwarderId("188.3.67.4"))


def cf3(example: CnmaConfig) -> PathMetrics:
    return network_service_table(example.topology, example.policy)[KEY]


def test_statistics_of_a_round() -> None:
    measured = Measurement(KEY, (10_000, 14_000, 12_000, 20_000), lost=1)
    assert measured.one_way == (5000, 7000, 6000, 10_000)
    assert measured.delay == 6500  # half the median round trip (13 ms)
    assert measured.jitter == 2333  # mean of |2000|, |1000|, |4000|
    assert Measurement(KEY, (900,)).jitter == 0


def test_replace_puts_the_measurement_in_place(example: CnmaConfig) -> None:
    path = apply(cf3(example), Measurement(KEY, (2000, 2400, 2200)), ProbeUse.REPLACE)
    assert (path.delay, path.jitter, path.min_delay, path.max_delay) == (1100, 150, 1000, 1200)
    assert path.measured
    assert (path.bandwidth, path.loss_ppm, path.nodes) == (2500, 60, cf3(example).nodes)


def test_bound_never_reports_less_than_measured(example: CnmaConfig) -> None:
    model = cf3(example)  # 6 ms, jitter 0.3 ms
    low = apply(model, Measurement(KEY, (2000, 2400)), ProbeUse.BOUND)
    assert (low.delay, low.jitter, low.min_delay, low.max_delay) == (6000, 300, 1000, 6000)
    assert not low.measured
    high = apply(model, Measurement(KEY, (20_000, 30_000)), ProbeUse.BOUND)
    assert (high.delay, high.jitter, high.max_delay) == (12_500, 5000, 15_000)


def test_a_round_without_replies_changes_nothing(example: CnmaConfig) -> None:
    model = cf3(example)
    assert apply(model, Measurement(KEY, (), lost=5), ProbeUse.REPLACE) == model
