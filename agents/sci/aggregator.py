"""Metric Aggregator: GAS and Computing Time from instance state (sci-implementation 4.3, 5.3).

Pure functions of values: no clock, no sockets. The formulas are the draft's:

- per instance, ``available_i = max_capacity_i' - active_sessions_i`` (at least 0), where
  ``max_capacity_i'`` is ``max_capacity_i`` for a HEALTHY instance, ``max_capacity_i`` reduced
  by the degradation factor for a DEGRADED one (5.3), and the contribution is 0 for an
  UNHEALTHY or UNKNOWN instance and for one that is drained or in maintenance;
- ``GAS = floor(safety_margin * SUM(available_i))`` (4.3);
- Computing Time from the response times observed over the measurement window, UNHEALTHY
  instances excluded and DEGRADED ones weighted by ``degraded-weight`` (5.3).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from agents.sci.config import AggregationSettings
from agents.sci.values import Health, Sample, SiId

PERCENTILE_ESTIMATORS = frozenset({"percentile"})
MEAN_ESTIMATORS = frozenset({"mean", "load-weighted-mean", "trend-adjusted"})


@dataclass(frozen=True, slots=True)
class InstanceLoad:
    """What GAS needs of one instance: capacity, load, health and whether it takes requests."""

    si_id: SiId
    health: Health
    max_capacity: int
    active_sessions: int
    in_service: bool = True


def _percent(value: float) -> Fraction:
    return Fraction(str(value)) / 100


def available_slots(load: InstanceLoad, degradation_factor: float) -> int:
    """The instance's contribution to GAS before the safety margin (4.3, 5.3)."""
    if not load.in_service or load.health in (Health.UNHEALTHY, Health.UNKNOWN):
        return 0
    capacity = Fraction(load.max_capacity)
    if load.health is Health.DEGRADED:
        capacity *= 1 - _percent(degradation_factor)
    return max(0, math.floor(capacity) - load.active_sessions)


def gas(loads: Iterable[InstanceLoad], settings: AggregationSettings) -> int:
    """``floor(safety_margin * SUM over instances of available_slots)`` (4.3)."""
    total = sum(available_slots(load, settings.degradation_factor) for load in loads)
    return math.floor(total * _percent(settings.safety_margin))


def health_weight(health: Health, settings: AggregationSettings) -> float:
    """Weight of an instance's response times: 1, ``degraded-weight``, or 0 (5.3)."""
    if health is Health.HEALTHY:
        return 1.0
    if health is Health.DEGRADED:
        return float(_percent(settings.degraded_weight))
    return 0.0


@dataclass(frozen=True, slots=True)
class ComputingTime:
    """A Computing Time estimate with its statistics, in milliseconds (4.3, Table 1)."""

    value: float
    estimator: str
    window_ms: float
    mean: float
    minimum: float
    maximum: float
    rank: float
    at_rank: float
    samples: int

    @property
    def is_percentile(self) -> bool:
        """Whether ``value`` is a percentile (its rank is stated) rather than a mean."""
        return self.estimator in PERCENTILE_ESTIMATORS


def weighted_mean(pairs: Sequence[tuple[float, float]]) -> float:
    """``SUM(w * x) / SUM(w)`` of (value, weight) pairs with a positive total weight."""
    return sum(x * w for x, w in pairs) / sum(w for _, w in pairs)


def weighted_percentile(pairs: Sequence[tuple[float, float]], rank: float) -> float:
    """Nearest-rank percentile of weighted values: the smallest value whose cumulative weight
    reaches ``rank`` percent of the total."""
    ordered = sorted(pairs)
    target = sum(w for _, w in ordered) * rank / 100
    cumulative = 0.0
    for value, weight in ordered:
        cumulative += weight
        if cumulative >= target - 1e-12:
            return value
    return ordered[-1][0]


def _instance_mean(pairs: Sequence[tuple[float, float]], by: Sequence[SiId]) -> float:
    """``mean``: every instance counts once, whatever its load (instance means, health-weighted)."""
    per: dict[SiId, list[tuple[float, float]]] = {}
    for (value, weight), si_id in zip(pairs, by, strict=True):
        per.setdefault(si_id, []).append((value, weight))
    means = [(weighted_mean(items), items[0][1]) for items in per.values()]
    return weighted_mean(means)


def computing_time(
    samples: Iterable[Sample],
    health: Mapping[SiId, Health],
    settings: AggregationSettings,
    now: float,
) -> ComputingTime | None:
    """Computing Time over the measurement window, or None when nothing was observed (4.3).

    ``load-weighted-mean`` weights each instance's mean response time by its load (its number
    of requests in the window) and by its health weight, which is the health-weighted mean of
    the samples; ``mean`` weights each instance once; ``percentile`` takes the health-weighted
    ``estimator-rank`` percentile; ``trend-adjusted`` counts the newer half of the window
    twice. Failed requests are not response times of the service and are left out.
    """
    window = settings.measurement_window_ms / 1000
    kept = [
        (sample, health_weight(health.get(sample.si_id, Health.UNKNOWN), settings))
        for sample in samples
        if sample.ok and now - window <= sample.at <= now
    ]
    kept = [(sample, weight) for sample, weight in kept if weight > 0]
    if not kept:
        return None
    pairs = [(sample.duration_ms, weight) for sample, weight in kept]
    mean = weighted_mean(pairs)
    rank = settings.estimator_rank if settings.estimator in PERCENTILE_ESTIMATORS else 95.0
    at_rank = weighted_percentile(pairs, rank)
    if settings.estimator in PERCENTILE_ESTIMATORS:
        value = at_rank
    elif settings.estimator == "mean":
        value = _instance_mean(pairs, [sample.si_id for sample, _ in kept])
    elif settings.estimator == "trend-adjusted":
        middle = now - window / 2
        value = weighted_mean([(s.duration_ms, w * (2 if s.at >= middle else 1)) for s, w in kept])
    else:
        value = mean
    return ComputingTime(
        value=value,
        estimator=settings.estimator,
        window_ms=window * 1000.0,
        mean=mean,
        minimum=min(value for value, _ in pairs),
        maximum=max(value for value, _ in pairs),
        rank=rank,
        at_rank=at_rank,
        samples=len(pairs),
    )
