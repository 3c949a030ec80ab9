"""The three health checks of sci-implementation 5.1.

The performance check is a pure function of the collected metrics and the outcomes of
dispatched requests; liveness and readiness are probes of a few lines each.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import requests

from agents.sci.config import HealthSettings, InstanceConfig
from agents.sci.values import CheckResult, CheckType, InstanceMetrics, Sample


@dataclass(frozen=True, slots=True)
class PerformanceOutcome:
    """The check result and, per resource, since when its utilization is above threshold."""

    result: CheckResult
    above_since: tuple[tuple[str, float], ...]


def performance_check(
    samples: Sequence[Sample],
    metrics: InstanceMetrics | None,
    settings: HealthSettings,
    above_since: Mapping[str, float],
    now: float,
) -> PerformanceOutcome:
    """Response time, error rate and sustained resource utilization against thresholds (5.1).

    ``samples`` are this instance's dispatched requests within the measurement window; none
    means nothing exceeded a bound. A resource fails only after staying above its
    utilization for ``duration-ms`` (e.g., CPU > 90 % for 30 s).
    """
    failures: list[str] = []
    answered = [s for s in samples if s.ok]
    limit = settings.response_time_threshold_ms
    if limit is not None and answered:
        mean = sum(s.duration_ms for s in answered) / len(answered)
        if mean > limit:
            failures.append(f"mean response time {mean:.1f} ms > {limit:g} ms")
    if settings.error_rate_threshold is not None and samples:
        rate = 100 * sum(1 for s in samples if not s.ok) / len(samples)
        if rate > settings.error_rate_threshold:
            failures.append(f"error rate {rate:.1f} % > {settings.error_rate_threshold:g} %")
    since: dict[str, float] = {}
    for threshold in settings.resource_thresholds:
        value = None if metrics is None else metrics.resource(threshold.resource)
        if value is None or value <= threshold.utilization:
            continue
        began = above_since.get(threshold.resource, now)
        since[threshold.resource] = began
        if (now - began) * 1000 >= threshold.duration_ms:
            failures.append(
                f"{threshold.resource} {value:g} % > {threshold.utilization:g} % "
                f"for {now - began:.0f} s"
            )
    result = CheckResult(CheckType.PERFORMANCE, passed=not failures, reason="; ".join(failures))
    return PerformanceOutcome(result, tuple(sorted(since.items())))


def tcp_connect(address: str, port: int, timeout_s: float) -> CheckResult:
    """Liveness by opening a TCP connection (5.1)."""
    try:
        with socket.create_connection((address, port), timeout=timeout_s):
            return CheckResult(CheckType.LIVENESS, passed=True)
    except OSError as exc:
        return CheckResult(CheckType.LIVENESS, passed=False, reason=f"TCP connect failed: {exc}")


def http_get(session: requests.Session, url: str, kind: CheckType, timeout_s: float) -> CheckResult:
    """Liveness or readiness by an HTTP GET; a 2xx answer passes (5.1)."""
    try:
        reply = session.get(url, timeout=timeout_s)
    except requests.RequestException as exc:
        return CheckResult(kind, passed=False, reason=f"GET {url} failed: {type(exc).__name__}")
    if 200 <= reply.status_code < 300:  # noqa: PLR2004
        return CheckResult(kind, passed=True)
    return CheckResult(kind, passed=False, reason=f"GET {url} answered {reply.status_code}")


def liveness(
    session: requests.Session, instance: InstanceConfig, settings: HealthSettings, port: int
) -> CheckResult:
    """The configured liveness check of one instance."""
    timeout = settings.liveness_timeout_ms / 1000
    if settings.liveness_method == "http-get" and instance.health_uri:
        return http_get(session, instance.health_uri, CheckType.LIVENESS, timeout)
    return tcp_connect(instance.address, instance.port or port, timeout)


def readiness(
    session: requests.Session, instance: InstanceConfig, settings: HealthSettings, port: int
) -> CheckResult:
    """Readiness: maintenance fails it; else GET readiness-uri (or health-uri), else TCP."""
    if instance.admin_state == "maintenance":
        return CheckResult(CheckType.READINESS, passed=False, reason="instance in maintenance mode")
    timeout = settings.readiness_timeout_ms / 1000
    url = instance.readiness_uri or instance.health_uri
    if url:
        return http_get(session, url, CheckType.READINESS, timeout)
    probe = tcp_connect(instance.address, instance.port or port, timeout)
    return CheckResult(CheckType.READINESS, passed=probe.passed, reason=probe.reason)
