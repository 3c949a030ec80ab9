"""The report message of Table 1 as ``report-sci-metrics`` input (sci-implementation 7.3).

Pure: builds RFC 7951 members (decimal64 and uint64 as strings) from values; the result
validates against ietf-cats-sci (tests/unit/sci/test_report.py checks it with libyang).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from agents.sci.aggregator import ComputingTime
from agents.sci.config import SciConfig
from agents.sci.health import Transition
from agents.sci.values import Health, InstanceMetrics, SiId
from controller.types import Json

RPC = "ietf-cats-sci:report-sci-metrics"


def rfc3339(at: float) -> str:
    """A Unix time as ``yang:date-and-time`` in UTC, to the millisecond."""
    text = datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def decimal(value: float, digits: int = 3) -> str:
    """A decimal64 value in RFC 7951 form."""
    return f"{value:.{digits}f}"


def percent(value: float) -> str:
    """A ``cats-t:percent``, clamped to 0-100."""
    return decimal(min(100.0, max(0.0, value)))


@dataclass(frozen=True, slots=True)
class InstanceDetail:
    """One entry of the optional Instance Details (Table 1)."""

    si_id: SiId
    health: Health
    max_capacity: int
    available_slots: int
    active_sessions: int
    metrics: InstanceMetrics | None


@dataclass(frozen=True, slots=True)
class ReportContent:
    """Everything a report states besides the configuration."""

    at: float
    sequence: int
    kind: str
    triggers: frozenset[str]
    gas: int
    computing_time: ComputingTime | None
    instances: tuple[InstanceDetail, ...]


def health_summary(healths: Sequence[Health]) -> Json:
    """Counts per state; ``unknown`` is given, so not counted in ``unhealthy`` (5.2, 7.3)."""
    return {
        "healthy": sum(1 for h in healths if h is Health.HEALTHY),
        "degraded": sum(1 for h in healths if h is Health.DEGRADED),
        "unhealthy": sum(1 for h in healths if h is Health.UNHEALTHY),
        "unknown": sum(1 for h in healths if h is Health.UNKNOWN),
    }


def computing_time_json(ct: ComputingTime) -> Json:
    """``computing-time`` with its estimator, rank, window and statistics (4.3)."""
    doc: Json = {
        "value": decimal(ct.value),
        "estimator": f"ietf-cats-sci:{ct.estimator}",
        "window": decimal(ct.window_ms),
        "statistics": {
            "mean": decimal(ct.mean),
            "min": decimal(ct.minimum),
            "max": decimal(ct.maximum),
            "percentile": [{"rank": decimal(ct.rank), "value": decimal(ct.at_rank)}],
            "window": decimal(ct.window_ms),
        },
    }
    if ct.is_percentile:
        doc["rank"] = decimal(ct.rank)
    return doc


def _metrics_json(m: InstanceMetrics) -> Json:
    resource = {
        name: percent(value)
        for name, value in (
            ("cpu-utilization", m.cpu),
            ("memory-utilization", m.memory),
            ("gpu-utilization", m.gpu),
            ("gpu-memory-utilization", m.gpu_memory),
            ("npu-utilization", m.npu),
        )
        if value is not None
    }
    performance: Json = {}
    if m.queue_depth is not None:
        performance["queue-depth"] = m.queue_depth
    if m.response_time_ms is not None:
        performance["response-time"] = decimal(m.response_time_ms)
    if m.response_time_p95_ms is not None:
        performance["response-time-p95"] = decimal(m.response_time_p95_ms)
    if m.throughput is not None:
        performance["throughput"] = decimal(m.throughput)
    if m.error_rate is not None:
        performance["error-rate"] = percent(m.error_rate)
    status: Json = {}
    if m.active_connections is not None:
        status["active-connections"] = m.active_connections
    if m.load_average is not None:
        status["load-average"] = decimal(m.load_average, 2)
    doc: Json = {"collected-at": rfc3339(m.collected_at)}
    for name, part in (("resource", resource), ("performance", performance), ("status", status)):
        if part:
            doc[name] = part
    return doc


def instance_json(detail: InstanceDetail) -> Json:
    """One ``instance`` entry: health, capacity, slots and the collected metrics (4.1)."""
    doc: Json = {"si-id": detail.si_id, "health": detail.health.value}
    doc.update(_metrics_json(detail.metrics) if detail.metrics else {})
    doc["max-capacity"] = detail.max_capacity
    doc["available-slots"] = detail.available_slots
    doc.setdefault("status", {})["active-sessions"] = detail.active_sessions
    return doc


def build_report(config: SciConfig, content: ReportContent) -> Json:
    """The ``report-sci-metrics`` input members (Table 1 plus report kind and metadata)."""
    settings = config.reporting
    doc: Json = {
        "csci-id": config.csci_id,
        "cs-id": config.cs_id,
        "timestamp": rfc3339(content.at),
        "sequence-number": str(content.sequence),
        "report-kind": content.kind,
        "trigger": sorted(f"ietf-cats-sci:{name}" for name in content.triggers),
        "gas": content.gas,
        "health-summary": health_summary([i.health for i in content.instances]),
    }
    if content.computing_time is not None:
        doc["computing-time"] = computing_time_json(content.computing_time)
    if config.optional_metrics:
        doc["optional-metrics"] = config.optional_metrics
    if settings.include_instance_details:
        doc["instance"] = [instance_json(detail) for detail in content.instances]
    doc["freshness-bound"] = decimal(
        float(settings.heartbeat_interval_ms * settings.freshness_multiplier)
    )
    doc["source"] = f"sci:{config.csci_id}"
    doc["confidence"] = "derived"
    return doc


def health_notification(
    config: SciConfig, si_id: SiId, change: Transition, available_slots: int
) -> Json:
    """``instance-health-changed`` (5.2), as RFC 7951 JSON without the event time."""
    return {
        "ietf-cats-sci:instance-health-changed": {
            "csci-id": config.csci_id,
            "cs-id": config.cs_id,
            "si-id": si_id,
            "old-health": change.old.value,
            "new-health": change.new.value,
            "check-type": change.check_type.value,
            "consecutive-results": change.consecutive,
            "reason": change.reason,
            "available-slots": available_slots,
        }
    }


def envelope(members: Json) -> Json:
    """``{"ietf-cats-sci:report-sci-metrics": members}``, as the schema validates an RPC."""
    return {RPC: members}
