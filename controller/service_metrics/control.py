"""Update control of the C-PS ingest as pure rules (service-metrics-op 8, 9).

Which CST change is significant (delta thresholds, health), which price increase is held back
(price dampening), whether a report exceeds the sender's rate, and what a throttled sender's
held reports amount to. Values in, values out; :mod:`controller.service_metrics.softstate`
applies them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.selection.joint import CstEntry, Health, Metric
from controller.selection.units import Timestamp
from controller.service_metrics.ingest import PendingPrice
from controller.service_metrics.policy import DeltaThreshold, PriceDampening, RateLimit
from controller.types import Json

#: Health values the Joint Selection treats as unusable (6.2.3 Step 1).
UNUSABLE_HEALTH = frozenset({Health.UNHEALTHY, Health.UNKNOWN})

FULL = "full"
DELTA = "delta"
HEARTBEAT = "heartbeat"

#: cst-entry-changed change kinds.
ADDED = "added"
UPDATED = "updated"
WITHDRAWN = "withdrawn"
AGED_OUT = "aged-out"
REMOVED = "removed"
FLAGGED = "flagged"
STALE = "stale"


def usable(entry: CstEntry, now: Timestamp) -> bool:
    """Whether the Joint Selection may use the entry: GAS > 0, not unhealthy, not expired."""
    return entry.gas > 0 and entry.health not in UNUSABLE_HEALTH and now < entry.expiry


def changed_metrics(old: CstEntry, new: CstEntry) -> tuple[Metric, ...]:
    """The selection metrics whose values differ (cst-entry-changed ``changed-metric``)."""
    pairs = (
        (Metric.GAS, old.gas, new.gas),
        (Metric.COMPUTING_TIME, old.computing_time, new.computing_time),
        (Metric.PRICE, old.price, new.price),
        (Metric.REPUTATION, old.reputation, new.reputation),
        (Metric.SECURITY_LEVEL, old.security_level, new.security_level),
    )
    return tuple(metric for metric, before, after in pairs if before != after)


_ONE_SLOT = 100  # a relative GAS threshold of one slot or less: any change counts


def significant(old: CstEntry, new: CstEntry, delta: DeltaThreshold) -> bool:
    """Whether a change from the announced ``old`` to ``new`` crosses a delta threshold (8).

    GAS by more than gas-absolute slots or gas-relative percent (any change of a site whose
    relative threshold is one slot or less: GAS counts whole slots), Computing Time by more than
    computing-time-relative percent, a health change (when health-change is set), a change of
    usability, or any change of price, reputation, security level or egress, which have no
    thresholds.
    """
    gas, was = new.gas, old.gas  # the percent tests are _relative's, inlined (per entry)
    moved, limit = abs(gas - was), delta.gas_relative * was  # limit: hundredths of a slot
    if moved and (moved > delta.gas_absolute or moved * 100 > limit or limit <= _ONE_SLOT):
        return True
    took = old.computing_time
    if abs(new.computing_time - took) * 100 > delta.computing_time_relative * took:
        return True
    if new.health != old.health and (
        delta.health_change or (new.health in UNUSABLE_HEALTH) != (old.health in UNUSABLE_HEALTH)
    ):
        return True
    return (
        old.price != new.price
        or old.reputation != new.reputation
        or old.security_level != new.security_level
        or old.egress != new.egress
    )


def cst_change(
    notified: CstEntry | None, new: CstEntry, delta: DeltaThreshold, *, newly_flagged: bool
) -> str | None:
    """The cst-entry-changed ``change`` a report causes, or None when nothing is announced."""
    if notified is None:
        return ADDED
    if new.gas == 0 and notified.gas > 0:
        return WITHDRAWN
    if significant(notified, new, delta):
        return UPDATED
    return FLAGGED if newly_flagged else None


def dampen(
    in_force: int | None,
    changed_at: Timestamp,
    reported: int | None,
    now: Timestamp,
    dampening: PriceDampening,
) -> PendingPrice | None:
    """The increase held back by price dampening, or None when ``reported`` takes effect (9).

    An increase above increase-threshold percent of the price in force, within the window
    after the price in force last changed, waits until that window has passed.
    """
    if not dampening.enabled or in_force is None or reported is None or reported <= in_force:
        return None
    effective_at = changed_at + dampening.window
    if now >= effective_at:
        return None
    if (reported - in_force) * 100 <= dampening.increase_threshold * in_force:
        return None
    return PendingPrice(reported, effective_at)


@dataclass(frozen=True, slots=True)
class RateWindow:
    """The reports a sender made in the current rate-limit interval (8, Rate Limiting)."""

    start: Timestamp
    count: int = 0

    def end(self, limit: RateLimit) -> Timestamp:
        """When the interval ends (a throttled report's values apply then)."""
        return self.start + limit.interval


def rate(window: RateWindow | None, now: Timestamp, limit: RateLimit) -> tuple[RateWindow, bool]:
    """The window after one more report, and whether that report exceeds max-reports."""
    if window is None or now >= window.start + limit.interval:
        window = RateWindow(now)
    if window.count >= limit.max_reports:
        return window, True
    return RateWindow(window.start, window.count + 1), False


@dataclass(slots=True)
class Held:
    """Throttled reports of one sender, folded: the newest values of each entry (8).

    ``full`` keeps, per site of a held full report, the keys listed since it, so that its
    removals apply at the end of the interval; ``heartbeats`` the sites whose soft state a
    held heartbeat refreshes. Keys are (CS-ID, CSCI-ID) or (Ingress, Egress).
    """

    due: Timestamp
    sequence: int
    entries: dict[tuple[str, str], tuple[Json, str | None]] = field(default_factory=dict)
    full: dict[str | None, set[tuple[str, str]]] = field(default_factory=dict)
    heartbeats: set[str | None] = field(default_factory=set)

    def hold(
        self, sequence: int, kind: str, site: str | None, items: list[tuple[tuple[str, str], Json]]
    ) -> None:
        """Fold one more throttled report in."""
        self.sequence = sequence
        if kind == HEARTBEAT:
            self.heartbeats.add(site)
            return
        if kind == FULL:
            stale = [k for k, (_, at) in self.entries.items() if site is None or at == site]
            for key in stale:
                del self.entries[key]
            self.full[site] = set()
        for key, item in items:
            self.entries[key] = (item, site)
            for listed in self.full.values():
                listed.add(key)
