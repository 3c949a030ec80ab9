"""The fast path of bulk reports: RFC 7951 input members built from typed values, no objects.

A 1,000-entry report built as pyangbind objects and encoded takes about a minute, some 10,000
times the same report as dicts (``python -m tools.bench.sdk``: 57 s against 4 ms on the shared
2-core machine): pyangbind creates a class for every leaf of every entry and compiles its
patterns as it does. These pure functions write the members of report-service-metrics and
report-network-metrics (service-metrics-op 8) with the RFC 7951 encodings (uint64 and decimal64
as strings, Section 6.1) for :meth:`Controller.report_service_metrics_bulk` and
:meth:`Controller.report_network_metrics_bulk`. They check nothing the server's libyang checks:
a wrong value is refused there, with its path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal

from controller.types import Json

Number = int | float | Decimal | str


def _decimal(value: Number) -> str:
    """A decimal64 value in RFC 7951 form (a string)."""
    return str(value)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cst_entry(  # noqa: PLR0913 - one keyword per metric of the entry
    cs_id: str,
    csci_id: str,
    *,
    gas: int,
    computing_time: Number,
    price: int | None = None,
    health: str | None = None,
    egress: str | None = None,
    extra: Mapping[str, object] | None = None,
) -> Json:
    """One ``entry`` of report-service-metrics: GAS, Computing Time (ms), and the optional
    Price, health and egress (service-metrics-op 5, 6.2.1); ``extra`` adds members as given."""
    entry: Json = {"cs-id": cs_id, "csci-id": csci_id, "gas": gas}
    entry["computing-time"] = _decimal(computing_time)
    if price is not None:
        entry["price"] = price
    if health is not None:
        entry["health"] = health
    if egress is not None:
        entry["egress"] = egress
    entry.update(extra or {})
    return entry


def service_report(
    sequence_number: int,
    entries: Iterable[Json],
    *,
    report_type: str = "full",
    site: str | None = None,
    timestamp: str | None = None,
) -> Json:
    """The input members of report-service-metrics (``timestamp`` defaults to now, UTC)."""
    members: Json = {
        "sequence-number": str(sequence_number),
        "timestamp": timestamp or _now(),
        "report-type": report_type,
    }
    if site is not None:
        members["site"] = site
    members["entry"] = list(entries)
    return members


def nst_path(
    ingress: str,
    egress: str,
    *,
    delay: Number,
    jitter: Number | None = None,
    extra: Mapping[str, object] | None = None,
) -> Json:
    """One ``path`` of report-network-metrics: network delay and jitter in ms (6.2.2)."""
    path: Json = {"ingress": ingress, "egress": egress, "delay": _decimal(delay)}
    if jitter is not None:
        path["jitter"] = _decimal(jitter)
    path.update(extra or {})
    return path


def network_report(
    sequence_number: int,
    paths: Iterable[Json],
    *,
    report_type: str = "full",
    timestamp: str | None = None,
) -> Json:
    """The input members of report-network-metrics."""
    return {
        "sequence-number": str(sequence_number),
        "timestamp": timestamp or _now(),
        "report-type": report_type,
        "path": list(paths),
    }
