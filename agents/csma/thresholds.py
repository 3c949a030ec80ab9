"""Delta-threshold reporting: which report, if any, the C-SMA sends now (service-metrics-op 8).

The C-SMA reports an update only when GAS changes by more than an absolute or relative
threshold (a single slot on a small site, :func:`gas_crossed`), Computing Time by more than a
relative one, the health changes, or the heartbeat interval expires. Each heartbeat carries
the current values by default (a full report, service-metrics-op 6.1, 8: the heartbeat
refreshes the C-PS's view), so a change below every threshold reaches the C-PS within one
heartbeat however long it lasts. The comparison is against the values the C-PS
acknowledged, so small changes that add up are reported once they cross a threshold; the
rules are those of the C-PS's update-control/delta-threshold (ietf-cats-service-metrics), so
both sides agree on what is significant. Pure: values in, a :class:`Plan` out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from agents.csma.values import Entry, EntryKey, Health

#: Health values the C-PS treats as unusable (service-metrics-op 6.2.3 step 1).
UNUSABLE = frozenset({Health.UNHEALTHY, Health.UNKNOWN})


class ReportType(StrEnum):
    """report-service-metrics ``report-type``."""

    FULL = "full"
    DELTA = "delta"
    HEARTBEAT = "heartbeat"


@dataclass(frozen=True, slots=True)
class Thresholds:
    """update-control/delta-threshold, with the module's defaults."""

    gas_absolute: int = 50
    gas_relative: Decimal = Decimal(10)  # percent
    computing_time_relative: Decimal = Decimal(20)  # percent
    health_change: bool = True


def _relative(old: Decimal, new: Decimal, percent: Decimal) -> bool:
    """Whether ``new`` differs from ``old`` by more than ``percent`` of ``old``."""
    return abs(new - old) * 100 > percent * old


def gas_crossed(old: int, new: int, thresholds: Thresholds) -> bool:
    """Whether GAS moved by more than gas-absolute slots or gas-relative percent of ``old``.

    GAS counts whole slots, so a relative threshold of one slot or less (a small site: 10 %
    of GAS 10 or below) is crossed by any change; 'more than one slot' would hide every
    single-slot change of such a site for good. The C-PS's update-control applies the same
    rule (controller.service_metrics.control.significant).
    """
    moved = abs(new - old)
    limit = thresholds.gas_relative * old  # in hundredths of a slot
    one_slot = 100
    return moved > 0 and (
        moved > thresholds.gas_absolute or moved * 100 > limit or limit <= one_slot
    )


def significant(old: Entry, new: Entry, thresholds: Thresholds) -> bool:
    """Whether the change from the acknowledged ``old`` to ``new`` must be reported (8).

    A withdrawal (GAS to 0) and a change of usability always are, and so is the first
    measurement replacing an estimate (the confidence changes); price, reputation and
    security level have no thresholds, so any change of them is.
    """
    if new.confidence != old.confidence:
        return True
    if new.gas != old.gas and (
        new.gas == 0 or old.gas == 0 or gas_crossed(old.gas, new.gas, thresholds)
    ):
        return True
    if _relative(old.computing_time, new.computing_time, thresholds.computing_time_relative):
        return True
    if new.health != old.health and (
        thresholds.health_change or (new.health in UNUSABLE) != (old.health in UNUSABLE)
    ):
        return True
    return (old.price, old.reputation, old.security_level) != (
        new.price,
        new.reputation,
        new.security_level,
    )


@dataclass(frozen=True, slots=True)
class Plan:
    """One report to send: its type and entries (none for a heartbeat)."""

    kind: ReportType
    entries: tuple[Entry, ...] = ()

    def acknowledged(self, before: Mapping[EntryKey, Entry] | None) -> dict[EntryKey, Entry]:
        """What the C-PS holds once it accepted this report."""
        if self.kind is ReportType.FULL:
            return {entry.key: entry for entry in self.entries}
        held = dict(before or {})
        held.update((entry.key, entry) for entry in self.entries)
        return held


def plan(
    acknowledged: Mapping[EntryKey, Entry] | None,
    current: Mapping[EntryKey, Entry],
    thresholds: Thresholds,
    *,
    heartbeat_due: bool,
    heartbeat_full: bool = False,
) -> Plan | None:
    """The report due now, or None.

    Full when nothing is acknowledged (start, after the C-PS was unreachable) or an entry
    disappeared (a full report removes it); delta with the significant changes; at the
    heartbeat a heartbeat report (``heartbeat_full``: a full one), or a full report when a
    change is due too.
    """
    full = Plan(ReportType.FULL, tuple(current[key] for key in sorted(current)))
    if acknowledged is None or set(acknowledged) - set(current):
        return full
    changed = tuple(
        current[key]
        for key in sorted(current)
        if key not in acknowledged or significant(acknowledged[key], current[key], thresholds)
    )
    if heartbeat_due:
        return full if changed or heartbeat_full else Plan(ReportType.HEARTBEAT)
    return Plan(ReportType.DELTA, changed) if changed else None
