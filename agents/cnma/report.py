"""What to report and the report-network-metrics input (service-metrics-op 6.2.2, 8).

Pure functions of path snapshots. The C-NMA keeps the snapshot the C-PS acknowledged; each
interval :func:`plan` compares the new snapshot with it: a first report, a heartbeat or a path
that disappeared gives a ``full`` report (a full report removes the sender's unlisted entries,
the only way to withdraw a path); paths whose change crosses the thresholds give a ``delta``
report of those paths only; otherwise nothing is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from agents.cnma.config import DelayUnit, Thresholds
from agents.cnma.paths import PathKey, PathMetrics
from controller.selection.units import Micros, to_ms
from controller.types import Json

MODULE = "ietf-cats-service-metrics"
OPERATION = "report-network-metrics"
Snapshot = Mapping[PathKey, PathMetrics]
_GROUP_OCTETS = 4  # admin groups are 32-bit words (RFC 3630, RFC 7308)


class ReportType(StrEnum):
    """The report-type of report-network-metrics."""

    FULL = "full"
    DELTA = "delta"


@dataclass(frozen=True, slots=True)
class Plan:
    """A report to send: its type and paths."""

    kind: ReportType
    paths: tuple[PathMetrics, ...]

    def acknowledged(self, previous: Snapshot | None) -> dict[PathKey, PathMetrics]:
        """The C-PS's view once this report is accepted."""
        if self.kind is ReportType.FULL or previous is None:
            return {path.key: path for path in self.paths}
        return {**previous, **{path.key: path for path in self.paths}}


def _beyond(old: int, new: int, absolute: int, relative: Decimal) -> bool:
    change = abs(new - old)
    return change > absolute and change > relative * old / 100


def significant(old: PathMetrics, new: PathMetrics, thresholds: Thresholds) -> bool:
    """Whether ``new`` differs from ``old`` enough to be reported (6.1 delta thresholds)."""
    if _beyond(old.delay, new.delay, thresholds.delay_absolute, thresholds.delay_relative):
        return True
    if _beyond(old.jitter, new.jitter, thresholds.jitter_absolute, Decimal(0)):
        return True
    if abs(new.loss_ppm - old.loss_ppm) > thresholds.loss_absolute:
        return True
    if (old.bandwidth is None) != (new.bandwidth is None):
        return True
    if (
        old.bandwidth is not None
        and new.bandwidth is not None
        and _beyond(old.bandwidth, new.bandwidth, 0, thresholds.bandwidth_relative)
    ):
        return True
    te = ("nodes", "admin_group", "color", "te_metric", "igp_metric", "anomalous", "measured")
    return any(getattr(old, name) != getattr(new, name) for name in te)


def plan(
    previous: Snapshot | None,
    current: Snapshot,
    thresholds: Thresholds,
    *,
    heartbeat_due: bool,
) -> Plan | None:
    """The report this interval calls for, or None (service-metrics-op 8)."""
    if previous is None or heartbeat_due or set(previous) - set(current):
        return Plan(ReportType.FULL, tuple(current.values()))
    changed = tuple(
        path
        for key, path in current.items()
        if key not in previous or significant(previous[key], path, thresholds)
    )
    return Plan(ReportType.DELTA, changed) if changed else None


def millis(value: Micros) -> str:
    """cats-t:milliseconds as RFC 7951 decimal64 text (three fraction digits)."""
    return str(to_ms(value))


def hex_string(mask: int) -> str:
    """A bit mask as yang:hex-string, in whole 32-bit words (RFC 7308 extended groups)."""
    octets = max(_GROUP_OCTETS, -(-mask.bit_length() // 32) * _GROUP_OCTETS)
    return ":".join(f"{b:02x}" for b in mask.to_bytes(octets, "big"))


def path_attributes(path: PathMetrics) -> Json:
    """The path-attributes container."""
    attributes: Json = {"admin-group": hex_string(path.admin_group)}
    if path.color is not None:
        attributes["color"] = path.color
    attributes |= {
        "te-metric": path.te_metric,
        "igp-metric": path.igp_metric,
        "min-delay": millis(path.min_delay),
        "max-delay": millis(path.max_delay),
        "hop-count": path.hop_count,
    }
    if path.anomalous:
        attributes["anomalous"] = True
    return attributes


@dataclass(frozen=True, slots=True)
class Metadata:
    """The metric metadata of every reported value (agent-selection-mapping 7.4)."""

    collected_at: datetime
    freshness_bound: Micros
    source: str

    def json(self, *, measured: bool) -> Json:
        """collected-at, freshness-bound, source and confidence."""
        return {
            "collected-at": self.collected_at.isoformat(),
            "freshness-bound": millis(self.freshness_bound),
            "source": self.source,
            "confidence": "asserted" if measured else "derived",
        }


def path_json(path: PathMetrics, unit: DelayUnit, metadata: Metadata) -> Json:
    """One ``path`` entry of report-network-metrics."""
    entry: Json = {"ingress": path.ingress, "egress": path.egress}
    if unit is DelayUnit.US:
        entry |= {"delay-us": path.delay, "jitter-us": path.jitter}
    else:
        entry |= {"delay": millis(path.delay), "jitter": millis(path.jitter)}
    if path.bandwidth is not None:
        entry["bandwidth"] = path.bandwidth
    entry["loss-rate"] = path.loss_ppm
    entry["path-attributes"] = path_attributes(path)
    return entry | metadata.json(measured=path.measured)


def network_report(
    sequence: int,
    timestamp: datetime,
    report: Plan,
    unit: DelayUnit,
    metadata: Metadata,
) -> Json:
    """The input of report-network-metrics (paths in (Ingress, Egress) order)."""
    paths = sorted(report.paths, key=lambda path: path.key)
    members: Json = {
        "sequence-number": str(sequence),
        "timestamp": timestamp.isoformat(),
        "report-type": report.kind.value,
    }
    if paths:
        members["path"] = [path_json(path, unit, metadata) for path in paths]
    return members


def rpc_document(module: str, operation: str, members: Mapping[str, Any]) -> Json:
    """The RPC as an RFC 7951 instance (``{"module:operation": input}``), for validation."""
    return {f"{module}:{operation}": members}
