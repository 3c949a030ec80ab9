"""Steps 1 to 5 of the Joint Selection Algorithm for one candidate (service-metrics-op 6.2.3).

Each step either keeps the candidate or excludes it with the reason code of the comparison
that failed. A constraint in force is never satisfied by an unknown value (value-unknown).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from controller.selection.joint.outcome import CandidateReport, UnusableValue
from controller.selection.joint.requirement import HardConstraints, SelectionSettings
from controller.selection.joint.tables import CstEntry, NstEntry
from controller.selection.joint.vocabulary import ExclusionReason, Health, Metric, ValueCondition
from controller.selection.units import Micros, Timestamp, to_ms

Reason = ExclusionReason
_UNHEALTHY = frozenset({Health.UNHEALTHY, Health.UNKNOWN})
_STALE_COMPUTING = (
    UnusableValue(Metric.GAS, ValueCondition.STALE),
    UnusableValue(Metric.COMPUTING_TIME, ValueCondition.STALE),
)
_STALE_DELAY = (UnusableValue(Metric.NETWORK_DELAY, ValueCondition.STALE),)


def _unknown(entry: CstEntry, metric: Metric, constraint: str) -> CandidateReport:
    return CandidateReport(
        entry,
        reason=Reason.VALUE_UNKNOWN,
        detail=f"{constraint} in force, {metric.value} unknown",
        unusable=(UnusableValue(metric, ValueCondition.UNKNOWN),),
    )


def lookup(entry: CstEntry, hard: HardConstraints, now: Timestamp) -> CandidateReport | None:
    """Step 1 (Service Lookup): drop expired entries, GAS = 0 and unhealthy instances."""
    if entry.expired(now):
        detail = f"expired {now - entry.expiry:.3f} s ago, treated as GAS 0"
        return CandidateReport(
            entry, reason=Reason.ENTRY_EXPIRED, detail=detail, unusable=_STALE_COMPUTING
        )
    if entry.gas <= 0:
        return CandidateReport(entry, reason=Reason.GAS_EXHAUSTED, detail="GAS 0")
    if entry.health in _UNHEALTHY:
        return CandidateReport(
            entry, reason=Reason.INSTANCE_UNHEALTHY, detail=f"health {entry.health.value}"
        )
    if entry.health is Health.DEGRADED and not hard.accept_degraded:
        return CandidateReport(entry, reason=Reason.DEGRADED_NOT_ACCEPTED, detail="health degraded")
    return None


@dataclass(frozen=True, slots=True)
class _Rule:
    """One threshold comparison of Step 2 or Step 5."""

    metric: Metric
    constraint: str
    reason: ExclusionReason
    label: str
    minimum: bool
    unit: str = ""


_SECURITY = _Rule(
    Metric.SECURITY_LEVEL,
    "min-security-level",
    Reason.SECURITY_LEVEL_BELOW_MINIMUM,
    "Security Level",
    minimum=True,
)
_REPUTATION = _Rule(
    Metric.REPUTATION,
    "min-reputation",
    Reason.REPUTATION_BELOW_MINIMUM,
    "Reputation",
    minimum=True,
)
_PRICE = _Rule(Metric.PRICE, "max-price", Reason.PRICE_ABOVE_MAXIMUM, "Price", minimum=False)
_GAS = _Rule(Metric.GAS, "required-gas", Reason.GAS_INSUFFICIENT, "GAS", minimum=True)
_BANDWIDTH = _Rule(
    Metric.BANDWIDTH,
    "min-bandwidth",
    Reason.BANDWIDTH_BELOW_MINIMUM,
    "Bandwidth",
    minimum=True,
    unit=" Mbps",
)
_JITTER = _Rule(
    Metric.JITTER, "max-jitter", Reason.JITTER_ABOVE_MAXIMUM, "Jitter", minimum=False, unit=" ms"
)
_LOSS = _Rule(
    Metric.LOSS_RATE,
    "max-loss-rate",
    Reason.LOSS_RATE_ABOVE_MAXIMUM,
    "Loss Rate",
    minimum=False,
    unit=" ppm",
)
_LATENCY = _Rule(
    Metric.TOTAL_SERVICE_TIME,
    "max-latency",
    Reason.LATENCY_ABOVE_MAXIMUM,
    "TST",
    minimum=False,
    unit=" ms",
)
_TIMES = frozenset({Metric.JITTER, Metric.TOTAL_SERVICE_TIME})


def _shown(value: int | Decimal, rule: _Rule) -> str:
    shown = to_ms(Micros(int(value))) if rule.metric in _TIMES else value
    return f"{shown}{rule.unit}"


def _bound(
    entry: CstEntry, value: int | None, limit: int | Decimal | None, rule: _Rule
) -> CandidateReport | None:
    """Exclude when the constraint is in force and the value is unknown or violates it."""
    if limit is None:
        return None
    if value is None:
        return _unknown(entry, rule.metric, rule.constraint)
    if value < limit if rule.minimum else value > limit:
        sign = "<" if rule.minimum else ">"
        detail = f"{rule.label} {_shown(value, rule)} {sign} {_shown(limit, rule)}"
        return CandidateReport(entry, reason=rule.reason, detail=detail)
    return None


def _validated(entry: CstEntry, hard: HardConstraints) -> CandidateReport | None:
    """Section 9: with require-validated, a self-reported Security Level is only a hint."""
    if (
        hard.min_security_level is None
        or not hard.require_validated_security_level
        or entry.security_level_validated
    ):
        return None
    detail = f"Security Level {entry.security_level} is self-reported"
    return CandidateReport(entry, reason=Reason.SECURITY_LEVEL_NOT_VALIDATED, detail=detail)


def computing_constraints(entry: CstEntry, hard: HardConstraints) -> CandidateReport | None:
    """Step 2 (Computing Constraint Filtering): security, reputation, price, GAS (a-d)."""
    return (
        _bound(entry, entry.security_level, hard.min_security_level, _SECURITY)
        or _validated(entry, hard)
        or _bound(entry, entry.reputation, hard.min_reputation, _REPUTATION)
        or _bound(entry, entry.price, hard.max_price, _PRICE)
        or _bound(entry, entry.gas, hard.required_gas, _GAS)
    )


def path_lookup(
    entry: CstEntry, path: NstEntry | None, now: Timestamp, settings: SelectionSettings
) -> CandidateReport | None:
    """Step 3 (Network Path Lookup) with the freshness and time-sync rules of 6.2.2.

    An NST entry older than the CST entry by more than the time-sync window is not combined
    with it (network-entry-out-of-sync); a newer one is.
    """
    if entry.egress is None:
        return CandidateReport(
            entry, reason=Reason.EGRESS_UNKNOWN, detail="no attachment point for the CSCI-ID"
        )
    if path is None:
        return CandidateReport(
            entry, reason=Reason.NO_NETWORK_PATH, detail=f"no NST entry to {entry.egress}"
        )
    lifetime = settings.network_entry_lifetime
    if lifetime is not None and now - path.last_updated > lifetime:
        detail = f"NST entry to {entry.egress} not refreshed for {now - path.last_updated:.3f} s"
        return CandidateReport(
            entry, path, reason=Reason.NO_NETWORK_PATH, detail=detail, unusable=_STALE_DELAY
        )
    lag = entry.last_updated - path.last_updated
    if lag > settings.time_sync_window:
        window = settings.time_sync_window
        detail = f"NST entry {lag:.3f} s older than the CST entry (window {window:g} s)"
        return CandidateReport(
            entry,
            path,
            reason=Reason.NETWORK_ENTRY_OUT_OF_SYNC,
            detail=detail,
            unusable=_STALE_DELAY,
        )
    return None


def network_constraints(
    entry: CstEntry, path: NstEntry, tst: Micros, hard: HardConstraints
) -> CandidateReport | None:
    """Step 5 (Network Constraint Filtering): bandwidth, jitter, loss rate, latency (a-d)."""
    found = (
        _bound(entry, path.bandwidth, hard.min_bandwidth, _BANDWIDTH)
        or _bound(entry, path.jitter, hard.max_jitter, _JITTER)
        or _bound(entry, path.loss_rate, hard.max_loss_rate, _LOSS)
        or _bound(entry, tst, hard.max_latency, _LATENCY)
    )
    if found is None:
        return None
    return CandidateReport(
        entry, path, tst, reason=found.reason, detail=found.detail, unusable=found.unusable
    )


def screen(
    entry: CstEntry,
    path: NstEntry | None,
    hard: HardConstraints,
    now: Timestamp,
    settings: SelectionSettings,
) -> CandidateReport:
    """Steps 1-5 for one candidate: excluded with a reason, or feasible with its TST."""
    excluded = lookup(entry, hard, now) or computing_constraints(entry, hard)
    if excluded is None:
        excluded = path_lookup(entry, path, now, settings)
    if excluded is not None:
        return excluded
    assert path is not None  # path_lookup excluded a candidate without one
    tst = Micros(entry.computing_time + path.network_delay)
    return network_constraints(entry, path, tst, hard) or CandidateReport(entry, path, tst)
