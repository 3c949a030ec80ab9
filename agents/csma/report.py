"""report-service-metrics input from a :class:`Plan` (service-metrics-op 6.1, 8), and the
report-sci-metrics input read into :class:`SciMetrics` (sci-implementation Table 1).

Pure: RFC 7951 members (decimal64 and uint64 as strings). The C-PS's schema validates what
:func:`service_report` builds (tests/unit/csma/test_report.py checks it with libyang).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from agents.csma.thresholds import Plan, ReportType
from agents.csma.values import MS, Entry, SciMetrics, sci_health
from controller.types import CsciId, CsId, Json, SchemaPath

MODULE = "ietf-cats-service-metrics"
OPERATION = "report-service-metrics"
SCI_RPC = SchemaPath("/ietf-cats-sci:report-sci-metrics")


def rfc3339(at: datetime) -> str:
    """A UTC time as ``yang:date-and-time`` to the millisecond."""
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def milliseconds(value: Decimal) -> str:
    """A cats-t:milliseconds value."""
    return str(value.quantize(MS))


def entry_json(entry: Entry, freshness_bound_ms: int) -> Json:
    """One ``entry`` of the report (6.2.1 fields, section 8 ``aggregated``, metadata)."""
    doc: Json = {
        "cs-id": entry.cs_id,
        "csci-id": entry.csci_id,
        "gas": entry.gas,
        "computing-time": milliseconds(entry.computing_time),
        "health": entry.health.value,
    }
    for name, value in (
        ("price", entry.price),
        ("reputation", entry.reputation),
        ("security-level", entry.security_level),
    ):
        if value is not None:
            doc[name] = value
    if entry.aggregated:
        doc["aggregated"] = True
    doc["collected-at"] = entry.collected_at
    doc["freshness-bound"] = f"{freshness_bound_ms}.000"
    if entry.source:
        doc["source"] = entry.source
    doc["confidence"] = entry.confidence.value  # estimated: the Computing Time is not measured
    return doc


def service_report(
    sequence: int, at: datetime, planned: Plan, site: str | None, freshness_bound_ms: int
) -> Json:
    """The ``report-service-metrics`` input members of one planned report."""
    doc: Json = {
        "sequence-number": str(sequence),
        "timestamp": rfc3339(at),
        "report-type": planned.kind.value,
    }
    if site is not None:
        doc["site"] = site
    if planned.kind is not ReportType.HEARTBEAT:
        doc["entry"] = [entry_json(entry, freshness_bound_ms) for entry in planned.entries]
    return doc


def _optional(members: Json, name: str) -> int | None:
    value = members.get("optional-metrics", {}).get(name)
    return None if value is None else int(value)


def sci_metrics(members: Json) -> SciMetrics:
    """The values of a validated report-sci-metrics input the C-SMA advertises."""
    summary = members["health-summary"]
    computing = members.get("computing-time")
    return SciMetrics(
        CsId(str(members["cs-id"])),
        CsciId(str(members["csci-id"])),
        int(members["gas"]),
        None if computing is None else Decimal(str(computing["value"])),
        sci_health(
            int(summary["healthy"]),
            int(summary["degraded"]),
            int(summary["unhealthy"]),
            int(summary.get("unknown", 0)),
        ),
        str(members["timestamp"]),
        _optional(members, "cost"),
        _optional(members, "reputation"),
        _optional(members, "security-label"),
    )


def freshness_seconds(members: Json) -> float | None:
    """The report's freshness bound in seconds, when it states one."""
    bound = members.get("freshness-bound")
    return None if bound is None else float(Decimal(str(bound))) / 1000
