"""The site's local metric cache: accepted SCI reports, their sequence numbers and ages.

service-metrics-op 6.1 and 8: "each service site or C-SMA maintains a local metric cache".
Pure: :func:`accept` returns a new cache and what happened; the time is passed in (seconds on
any monotonic clock). A report whose sequence number is lower than the last accepted one of
its (CSCI-ID, CS-ID) is refused; an equal one is a retransmission, acknowledged and not applied
(ietf-cats-sci report-sci-metrics). A report without a Computing Time (no response observed
in the SCI's window) keeps the SCI's last estimate. An SCI that stops reporting goes stale
when its lifetime passes: it is advertised with GAS 0 (withdrawn, service-metrics-op 8
Soft-State Aging) and forgotten after ``forget_after`` more seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from agents.csma.values import EntryKey, Health, SciMetrics


class Outcome(StrEnum):
    """What :func:`accept` did with a report."""

    APPLIED = "applied"
    RETRANSMISSION = "retransmission"


class RegressedError(ValueError):
    """The report's sequence number is below the last accepted one (sequence-number-regressed)."""

    def __init__(self, sequence: int, last: int) -> None:
        super().__init__(f"sequence number {sequence} is below the last accepted {last}")
        self.sequence, self.last = sequence, last


class OwnedError(ValueError):
    """Another SCI user reports for this (CSCI-ID, CS-ID) and its report has not aged out."""


@dataclass(frozen=True, slots=True)
class Cached:
    """One SCI's latest accepted report."""

    metrics: SciMetrics
    sequence: int
    reporter: str  # the authenticated user that sent it
    received: float
    expires: float

    def stale(self, now: float) -> bool:
        """Whether the report's lifetime has passed."""
        return now >= self.expires


@dataclass(frozen=True, slots=True)
class Arrival:
    """An authenticated, validated SCI report: its values, sequence number and sender."""

    metrics: SciMetrics
    sequence: int
    reporter: str


@dataclass(frozen=True, slots=True)
class SiteCache:
    """The latest report of each SCI of the site, by (CS-ID, CSCI-ID)."""

    reports: Mapping[EntryKey, Cached] = field(default_factory=dict)


def accept(
    cache: SiteCache, arrival: Arrival, now: float, lifetime: float
) -> tuple[SiteCache, Outcome]:
    """Apply one report; raises :class:`RegressedError` for a lower sequence number."""
    metrics, sequence = arrival.metrics, arrival.sequence
    known = cache.reports.get(metrics.key)
    if known is not None:
        if known.reporter != arrival.reporter and not known.stale(now):
            raise OwnedError(f"{metrics.csci_id} is reported by another SCI user")
        if known.reporter != arrival.reporter:
            known = None  # the other sender's report aged out: a new sequence begins
    if known is not None:
        if sequence < known.sequence:
            raise RegressedError(sequence, known.sequence)
        if sequence == known.sequence:
            return cache, Outcome.RETRANSMISSION
    if metrics.computing_time is None and known is not None:
        # no response time observed in the SCI's window: the last estimate stands (5.3.2)
        metrics = replace(metrics, computing_time=known.metrics.computing_time)
    cached = Cached(metrics, sequence, arrival.reporter, now, now + lifetime)
    return SiteCache({**cache.reports, metrics.key: cached}), Outcome.APPLIED


def live(cache: SiteCache, now: float) -> dict[EntryKey, SciMetrics]:
    """Each SCI's metrics as they stand now: a stale SCI is withdrawn (GAS 0, health unknown)."""
    found: dict[EntryKey, SciMetrics] = {}
    for key, cached in cache.reports.items():
        metrics = cached.metrics
        if cached.stale(now):
            metrics = replace(metrics, gas=0, health=Health.UNKNOWN)
        found[key] = metrics
    return found


def forget(cache: SiteCache, now: float, forget_after: float) -> SiteCache:
    """Drop the SCIs stale for longer than ``forget_after`` seconds (their entries go away)."""
    kept = {k: c for k, c in cache.reports.items() if now < c.expires + forget_after}
    return cache if len(kept) == len(cache.reports) else SiteCache(kept)
