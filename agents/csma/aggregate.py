"""Entries advertised to the C-PS: one per SCI, or one per site and service (section 8).

service-metrics-op 8 (Hierarchical Aggregation): "the C-SMA MAY aggregate per-SCI metrics into
a single per-site advertisement"; the entry says ``aggregated true`` and carries the site's
CSCI-ID (the Egress CATS-Forwarder then selects the SCI locally). Per service of the site:

- GAS is the sum of the SCIs' GAS (5.3.1: available slots add up; a stale SCI counts 0);
- Computing Time is the GAS-weighted mean of the measuring SCIs that have slots, else the
  plain mean of the measuring ones (5.3.2), so a full SCI does not make the site look slow or
  fast; SCIs that measured nothing yet do not count;
- health is the best of the members' (the site serves while one SCI serves);
- price is the highest, reputation and security level the lowest of the members' (an
  aggregate promises no more than its weakest member);
- the collection time is the oldest (an aggregate is as fresh as its oldest part).

An unmeasured Computing Time is never advertised as a measurement (5.3.2, 6.2.3 Step 4: the
C-PS adds it to the network delay and would take 0 ms as the fastest site):

- measured (per SCI): ``confidence asserted``; an aggregate of measured members: ``derived``;
- nothing measured, an estimate configured (:class:`Estimates`, per service or site-wide):
  the estimate, ``confidence estimated``, so a new site gets the traffic that measures it and
  the C-PS's decisions say the value was estimated;
- nothing measured and no estimate: the entry is withheld (:func:`withheld` names it, the
  service logs it once). Any built-in number would be made up, and a made-up value is
  what this rule exists to avoid; the operator configures ``computing-time-estimate``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_EVEN, Decimal

from agents.csma.values import HEALTH_ORDER, MS, Confidence, Entry, EntryKey, Estimates, SciMetrics
from controller.types import CsciId, CsId

_NO_ESTIMATES = Estimates()


def per_sci(
    metrics: Mapping[EntryKey, SciMetrics], estimates: Estimates = _NO_ESTIMATES
) -> dict[EntryKey, Entry]:
    """One entry per SCI: its values as the SCI reported them, or its service's estimate."""
    entries: dict[EntryKey, Entry] = {}
    for key, m in metrics.items():
        if m.computing_time is not None:
            entries[key] = _entry(m, m.computing_time, Confidence.ASSERTED)
            continue
        estimate = estimates.computing_time(m.cs_id)
        if estimate is not None:
            entries[key] = _entry(m, estimate, Confidence.ESTIMATED)
    return entries


def _entry(m: SciMetrics, computing_time: Decimal, confidence: Confidence) -> Entry:
    return Entry(
        m.cs_id,
        m.csci_id,
        m.gas,
        computing_time,
        m.health,
        m.collected_at,
        m.price,
        m.reputation,
        m.security_level,
        source=f"sci:{m.csci_id}",
        confidence=confidence,
    )


def _computing_time(members: list[SciMetrics]) -> Decimal | None:
    """The measured Computing Time of an aggregate, or None when no member measured one."""
    timed = [(m.gas, m.computing_time) for m in members if m.computing_time is not None]
    weighted = [(gas, ct) for gas, ct in timed if gas > 0]
    if weighted:
        total = sum((Decimal(gas) * ct for gas, ct in weighted), Decimal(0))
        value = total / sum(gas for gas, _ in weighted)
    elif timed:
        value = sum((ct for _, ct in timed), Decimal(0)) / len(timed)
    else:
        return None
    return value.quantize(MS, ROUND_HALF_EVEN)


def _extreme(values: Iterable[int | None], *, highest: bool) -> int | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    return max(present) if highest else min(present)


def site_entry(
    cs_id: CsId,
    site_csci: CsciId,
    members: list[SciMetrics],
    site: str,
    estimates: Estimates = _NO_ESTIMATES,
) -> Entry | None:
    """The aggregated entry of one service of the site; None when it has no Computing Time
    (no member measured one and no estimate is configured)."""
    computing_time = _computing_time(members)
    confidence = Confidence.DERIVED
    if computing_time is None:
        computing_time, confidence = estimates.computing_time(cs_id), Confidence.ESTIMATED
        if computing_time is None:
            return None
    return Entry(
        cs_id,
        site_csci,
        sum(m.gas for m in members),
        computing_time,
        min((m.health for m in members), key=HEALTH_ORDER.index),
        min(m.collected_at for m in members),
        _extreme((m.price for m in members), highest=True),
        _extreme((m.reputation for m in members), highest=False),
        _extreme((m.security_level for m in members), highest=False),
        aggregated=True,
        source=f"site:{site}",
        confidence=confidence,
    )


def per_site(
    metrics: Mapping[EntryKey, SciMetrics],
    site_csci: CsciId,
    site: str,
    estimates: Estimates = _NO_ESTIMATES,
) -> dict[EntryKey, Entry]:
    """One aggregated entry per service of the site (none for a service without a Computing
    Time)."""
    by_service: dict[CsId, list[SciMetrics]] = {}
    for m in metrics.values():
        by_service.setdefault(m.cs_id, []).append(m)
    entries = (
        site_entry(cs, site_csci, members, site, estimates) for cs, members in by_service.items()
    )
    return {entry.key: entry for entry in entries if entry is not None}


def withheld(
    metrics: Mapping[EntryKey, SciMetrics],
    entries: Mapping[EntryKey, Entry],
    site_csci: CsciId | None = None,
) -> set[EntryKey]:
    """The entries :func:`per_sci` (``site_csci`` None) or :func:`per_site` left out for want
    of a Computing Time."""
    if site_csci is None:
        expected = set(metrics)
    else:
        expected = {(m.cs_id, site_csci) for m in metrics.values()}
    return expected - set(entries)
