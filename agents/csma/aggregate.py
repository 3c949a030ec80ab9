"""Entries advertised to the C-PS: one per SCI, or one per site and service (section 8).

service-metrics-op 8 (Hierarchical Aggregation): "the C-SMA MAY aggregate per-SCI metrics into
a single per-site advertisement"; the entry says ``aggregated true`` and carries the site's
CSCI-ID (the Egress CATS-Forwarder then selects the SCI locally). Per service of the site:

- GAS is the sum of the SCIs' GAS (5.3.1: available slots add up; a stale SCI counts 0);
- Computing Time is the GAS-weighted mean of the SCIs that have slots, else the plain mean
  of those with an estimate (5.3.2), so a full SCI does not make the site look slow or fast;
- health is the best of the members' (the site serves while one SCI serves);
- price is the highest, reputation and security level the lowest of the members' (an
  aggregate promises no more than its weakest member);
- the collection time is the oldest (an aggregate is as fresh as its oldest part).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_EVEN, Decimal

from agents.csma.values import (
    HEALTH_ORDER,
    MS,
    CsciId,
    CsId,
    Entry,
    EntryKey,
    SciMetrics,
)


def per_sci(metrics: Mapping[EntryKey, SciMetrics]) -> dict[EntryKey, Entry]:
    """One entry per SCI, its values as the SCI reported them."""
    return {key: _entry(m) for key, m in metrics.items()}


def _entry(m: SciMetrics) -> Entry:
    return Entry(
        m.cs_id,
        m.csci_id,
        m.gas,
        m.computing_time or Decimal(0),
        m.health,
        m.collected_at,
        m.price,
        m.reputation,
        m.security_level,
        source=f"sci:{m.csci_id}",
    )


def _computing_time(members: list[SciMetrics]) -> Decimal:
    timed = [m for m in members if m.computing_time is not None]
    weighted = [m for m in timed if m.gas > 0]
    if weighted:
        total = sum((Decimal(m.gas) * (m.computing_time or 0) for m in weighted), Decimal(0))
        value = total / sum(m.gas for m in weighted)
    elif timed:
        value = sum((m.computing_time or Decimal(0) for m in timed), Decimal(0)) / len(timed)
    else:
        return Decimal(0)
    return value.quantize(MS, ROUND_HALF_EVEN)


def _extreme(values: Iterable[int | None], *, highest: bool) -> int | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    return max(present) if highest else min(present)


def site_entry(cs_id: CsId, site_csci: CsciId, members: list[SciMetrics], site: str) -> Entry:
    """The aggregated entry of one service of the site."""
    return Entry(
        cs_id,
        site_csci,
        sum(m.gas for m in members),
        _computing_time(members),
        min((m.health for m in members), key=HEALTH_ORDER.index),
        min(m.collected_at for m in members),
        _extreme((m.price for m in members), highest=True),
        _extreme((m.reputation for m in members), highest=False),
        _extreme((m.security_level for m in members), highest=False),
        aggregated=True,
        source=f"site:{site}",
    )


def per_site(
    metrics: Mapping[EntryKey, SciMetrics], site_csci: CsciId, site: str
) -> dict[EntryKey, Entry]:
    """One aggregated entry per service of the site."""
    by_service: dict[CsId, list[SciMetrics]] = {}
    for m in metrics.values():
        by_service.setdefault(m.cs_id, []).append(m)
    entries = (site_entry(cs, site_csci, members, site) for cs, members in by_service.items())
    return {entry.key: entry for entry in entries}
