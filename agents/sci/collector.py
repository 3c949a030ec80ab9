"""Metric Collector: instance metrics from the Prometheus text format (sci-implementation 4).

:func:`parse_exposition` turns one exposition (pulled from ``metrics-uri`` or pushed to the
SCI) into a :class:`Scrape`; :func:`derive` turns two consecutive scrapes into the
:class:`~agents.sci.values.InstanceMetrics` of 4.1 (rates and means over the interval between
them). Pure; the pull itself is :func:`pull`, a few lines around ``requests``.

The metric names the SCI understands (``catsctl service-instance`` exposes all of them):

================================================  =========  ===============================
name                                              type       4.1 metric
================================================  =========  ===============================
``cats_si_cpu_utilization_percent`` (also         gauge      resource: CPU, memory, GPU, GPU
``memory``, ``gpu``, ``gpu_memory``, ``npu``)                memory, NPU utilization (%)
``cats_si_queue_depth``                           gauge      performance: request queue depth
``cats_si_response_time_seconds``                 histogram  performance: mean and p95
``cats_si_requests_total``                        counter    performance: throughput
``cats_si_errors_total``                          counter    performance: error rate
``cats_si_active_sessions``                       gauge      status: active sessions
``cats_si_active_connections``                    gauge      status: active connections
``cats_si_load_average``                          gauge      status: load average
``cats_si_max_capacity``                          gauge      the instance's own capacity
================================================  =========  ===============================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import requests
from prometheus_client.parser import text_string_to_metric_families

from agents.sci.errors import SciError, refused
from agents.sci.values import InstanceMetrics

PREFIX = "cats_si_"
GAUGES = (
    "cpu_utilization_percent",
    "memory_utilization_percent",
    "gpu_utilization_percent",
    "gpu_memory_utilization_percent",
    "npu_utilization_percent",
    "queue_depth",
    "active_sessions",
    "active_connections",
    "load_average",
    "max_capacity",
)
HISTOGRAM = "response_time_seconds"
MAX_EXPOSITION = 1 << 20


@dataclass(frozen=True, slots=True)
class Scrape:
    """One exposition: gauges, counters and the response-time histogram, at a time."""

    at: float
    gauges: tuple[tuple[str, float], ...]
    requests: float | None = None
    errors: float | None = None
    rt_sum: float | None = None
    rt_count: float | None = None
    buckets: tuple[tuple[float, float], ...] = ()

    def gauge(self, name: str) -> float | None:
        """A gauge by its name without the prefix."""
        return dict(self.gauges).get(name)


def parse_exposition(text: str, at: float) -> Scrape:
    """Parse the Prometheus text format; unknown metrics are ignored.

    Raises:
        SciError: ``invalid-value`` when the text is not a valid exposition.
    """
    if len(text) > MAX_EXPOSITION:
        raise refused(f"metrics exposition larger than {MAX_EXPOSITION} bytes")
    gauges: dict[str, float] = {}
    counters: dict[str, float] = {}
    buckets: list[tuple[float, float]] = []
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                name = sample.name.removeprefix(PREFIX)
                if not sample.name.startswith(PREFIX) or math.isnan(sample.value):
                    continue
                if name in GAUGES:
                    gauges[name] = float(sample.value)
                elif (
                    name in ("requests_total", "errors_total", f"{HISTOGRAM}_sum")
                    or name == f"{HISTOGRAM}_count"
                ):
                    counters[name] = float(sample.value)
                elif name == f"{HISTOGRAM}_bucket":
                    buckets.append((float(sample.labels["le"]), float(sample.value)))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise refused(f"malformed Prometheus exposition: {exc}") from exc
    return Scrape(
        at=at,
        gauges=tuple(sorted(gauges.items())),
        requests=counters.get("requests_total"),
        errors=counters.get("errors_total"),
        rt_sum=counters.get(f"{HISTOGRAM}_sum"),
        rt_count=counters.get(f"{HISTOGRAM}_count"),
        buckets=tuple(sorted(buckets)),
    )


def _delta(new: float | None, old: float | None) -> float | None:
    """A counter's increase; a reset (decrease) counts from zero."""
    if new is None:
        return None
    if old is None or new < old:
        return new
    return new - old


def histogram_quantile(buckets: tuple[tuple[float, float], ...], q: float) -> float | None:
    """The q-quantile of cumulative buckets, linearly interpolated inside its bucket."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    target = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for bound, count in buckets:
        if count >= target:
            if math.isinf(bound):
                return lower
            inside = count - below
            return lower + (bound - lower) * ((target - below) / inside if inside else 1.0)
        lower, below = bound, count
    return lower


def derive(previous: Scrape | None, current: Scrape) -> InstanceMetrics:
    """The 4.1 metrics: gauges as read, rates and means over the interval since ``previous``."""
    old = previous or Scrape(at=current.at, gauges=())
    count = _delta(current.rt_count, old.rt_count)
    total = _delta(current.rt_sum, old.rt_sum)
    mean = total / count * 1000 if count and total is not None else None
    old_buckets = dict(old.buckets)
    bucket_delta = tuple(
        (bound, _delta(n, old_buckets.get(bound)) or 0.0) for bound, n in current.buckets
    )
    p95 = histogram_quantile(bucket_delta, 0.95) if count else None
    served = _delta(current.requests, old.requests)
    failed = _delta(current.errors, old.errors)
    elapsed = current.at - old.at
    throughput = served / elapsed if served is not None and elapsed > 0 else None
    error_rate = failed * 100 / served if served and failed is not None else None

    def whole(name: str) -> int | None:
        value = current.gauge(name)
        return None if value is None else max(0, round(value))

    return InstanceMetrics(
        collected_at=current.at,
        cpu=current.gauge("cpu_utilization_percent"),
        memory=current.gauge("memory_utilization_percent"),
        gpu=current.gauge("gpu_utilization_percent"),
        gpu_memory=current.gauge("gpu_memory_utilization_percent"),
        npu=current.gauge("npu_utilization_percent"),
        queue_depth=whole("queue_depth"),
        response_time_ms=mean,
        response_time_p95_ms=None if p95 is None else p95 * 1000,
        throughput=throughput,
        error_rate=error_rate,
        active_sessions=whole("active_sessions"),
        active_connections=whole("active_connections"),
        load_average=current.gauge("load_average"),
        max_capacity=whole("max_capacity"),
    )


def pull(session: requests.Session, url: str, timeout_s: float, at: float) -> Scrape:
    """GET an instance's metrics endpoint and parse it (4.2 Pull-based).

    Raises:
        SciError: when the endpoint cannot be read or its text is malformed.
    """
    try:
        reply = session.get(url, timeout=timeout_s)
        reply.raise_for_status()
    except requests.RequestException as exc:
        raise refused(f"cannot pull {url}: {exc}", tag="operation-failed") from exc
    return parse_exposition(reply.text, at)


__all__ = ["SciError", "Scrape", "derive", "histogram_quantile", "parse_exposition", "pull"]
