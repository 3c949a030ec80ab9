"""Metric reports into CST and NST entries, and the per-sender ledger (service-metrics-op 8).

Pure functions of the validated RFC 7951 input of report-service-metrics and
report-network-metrics: a report is attributed to its authenticated sender, its sequence number
must increase per sender and its timestamp must lie within ``max-clock-skew`` of the C-PS clock.
Entries take the C-PS receipt time as Last Updated, so every table time is on one clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

from controller.errors import CatsError, ErrorItem, ErrorType
from controller.selection.joint import (
    CstEntry,
    Health,
    Metric,
    Micros,
    NstEntry,
    PathAttributes,
    from_ms,
    from_us,
)
from controller.selection.units import Timestamp
from controller.service_metrics.policy import Attachment
from controller.types import CsciId, CsId, ForwarderId, Json

SERVICE_REPORT = "report-service-metrics"
NETWORK_REPORT = "report-network-metrics"
#: report-refusal-reason identities (without the module prefix).
SEQUENCE = "sequence-not-increasing"
CLOCK_SKEW = "clock-skew-exceeded"
RATE_LIMITED = "rate-limited"
NOT_AUTHORIZED = "sender-not-authorized"
OWNED = "entry-owned-by-other-sender"
#: The cats-t:component of the sender of each report operation.
COMPONENT = {SERVICE_REPORT: "c-sma", NETWORK_REPORT: "c-nma"}

#: Leaves of a CST report entry kept as reported and rendered back in the CST.
CST_PASS_THROUGH = (
    "computing-time-statistics",
    "measurement-window",
    "aggregated",
    "collected-at",
    "confidence",
    "source",  # rendered as observed-by: the SCI that measured, not the sender
)  # freshness-bound is the C-PS's own: heartbeat-interval x expiry-multiplier (6.2.1)
#: Leaves of an NST report path kept as reported and rendered back in the NST.
NST_PASS_THROUGH = ("path-attributes", "collected-at", "freshness-bound", "confidence")


def parse_time(value: str) -> Timestamp:
    """A yang:date-and-time as seconds since the epoch."""
    return datetime.fromisoformat(value).timestamp()


@dataclass(frozen=True, slots=True)
class SenderRecord:
    """One ``report-senders/sender``: the last accepted report and the counters."""

    source: str
    component: str
    discontinuity: Timestamp
    last_sequence: int | None = None
    last_report: Timestamp | None = None
    reports_accepted: int = 0
    entries_accepted: int = 0
    refused_sequence: int = 0
    refused_clock_skew: int = 0
    refused_not_authorized: int = 0
    rate_limited_dropped: int = 0
    rate_limited_throttled: int = 0
    price_increases_dampened: int = 0
    gas_capped: int = 0


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a whole report is refused: a report-refusal-reason identity and a message."""

    reason: str
    message: str
    leaf: str | None  # the offending input leaf; None: the whole report
    tag: str = "invalid-value"

    def error(self, operation: str) -> CatsError:
        """The error the RPC answers with (app-tag the reason)."""
        path = f"/ietf-cats-service-metrics:{operation}"
        if self.leaf is not None:
            path = f"{path}/{self.leaf}"
        return CatsError(
            ErrorItem(ErrorType.APPLICATION, self.tag, self.message, path, self.reason)
        )


def check_report(
    record: SenderRecord, sequence: int, timestamp: Timestamp, now: Timestamp, max_skew: float
) -> Refusal | None:
    """The sequence and clock checks of a report (service-metrics-op 8), or None if it passes."""
    last = record.last_sequence
    if last is not None and sequence <= last:
        message = f"sequence-number {sequence} of {record.source} does not exceed {last}"
        return Refusal(SEQUENCE, message, "sequence-number")
    skew = timestamp - now
    if abs(skew) > max_skew:
        message = f"timestamp is {skew:+.3f} s from the C-PS clock (max-clock-skew {max_skew} s)"
        return Refusal(CLOCK_SKEW, message, "timestamp")
    return None


def refused(record: SenderRecord, reason: str) -> SenderRecord:
    """The record after a refused report."""
    if reason == SEQUENCE:
        return replace(record, refused_sequence=record.refused_sequence + 1)
    if reason == RATE_LIMITED:
        return replace(record, rate_limited_dropped=record.rate_limited_dropped + 1)
    return replace(record, refused_clock_skew=record.refused_clock_skew + 1)


@dataclass(frozen=True, slots=True)
class Tally:
    """What one accepted report (or one applied batch of held values) did, for the counters."""

    entries: int = 0
    refused: int = 0  # not authorized or owned by another sender
    dampened: int = 0  # new price increases held back
    capped: int = 0
    throttled: bool = field(default=False, kw_only=True)


def accepted(
    record: SenderRecord, sequence: int | None, now: Timestamp, tally: Tally
) -> SenderRecord:
    """The record after an accepted report (``sequence`` None: held values applied later)."""
    return replace(
        record,
        last_sequence=record.last_sequence if sequence is None else sequence,
        last_report=record.last_report if sequence is None else now,
        reports_accepted=record.reports_accepted + (sequence is not None),
        entries_accepted=record.entries_accepted + tally.entries,
        refused_not_authorized=record.refused_not_authorized + tally.refused,
        rate_limited_throttled=record.rate_limited_throttled + tally.throttled,
        price_increases_dampened=record.price_increases_dampened + tally.dampened,
        gas_capped=record.gas_capped + tally.capped,
    )


@dataclass(frozen=True, slots=True)
class PendingPrice:
    """A price increase held back by dampening (service-metrics-op 9, Price Manipulation)."""

    price: int
    effective_at: Timestamp


class Attribution(NamedTuple):
    """What the tables keep of an entry beyond the selection core's values.

    ``notified`` is the CST entry as last announced (cst-entry-changed): the
    delta thresholds compare against it, so slow drifts are announced once they add up (8).
    An immutable named tuple rather than a frozen dataclass: one is built per entry of every
    report, and a tuple costs a third of a frozen dataclass to build (change it with
    ``_replace``).
    """

    sender: str
    sequence: int
    last_changed: Timestamp
    reported: Json  # pass-through leaves, as reported
    delay_in_us: bool = False  # NST: delay-us was reported
    notified: CstEntry | None = None  # CST: as announced
    reported_gas: int = 0  # CST: after capping
    capped: bool = False  # CST: gas-above-capacity
    price_changed: Timestamp = 0.0  # CST: price in force set
    pending: PendingPrice | None = None
    aged_out: bool = False  # CST aged out / NST stale, announced


_NO_ATTACHMENT = Attachment()


def authorized(attachment: Attachment | None, sender: str) -> bool:
    """Whether a sender may report a CSCI-ID (an empty authorized-sender list allows any)."""
    return (
        attachment is None
        or not attachment.authorized_senders
        or (sender in attachment.authorized_senders)
    )


def cst_entry(
    item: Mapping[str, Any],
    now: Timestamp,
    expiry: Timestamp,
    attachment: Attachment | None,
    site: str | None,
) -> CstEntry:
    """A CST entry from one report entry; the configured attachment wins over the report."""
    attached = attachment or _NO_ATTACHMENT
    get = item.get
    egress = attached.egress or get("egress")
    gas = int(item["gas"])
    if attached.gas_capacity is not None and gas > attached.gas_capacity:
        gas = attached.gas_capacity  # 9, GAS Inflation: capped (the caller counts and flags)
    health = get("health", "unknown")
    return CstEntry(  # positional: the constructor of a frozen dataclass is on the hot path
        CsId(str(item["cs-id"])),
        CsciId(str(item["csci-id"])),
        gas,
        micros(item["computing-time"]),
        now,
        expiry,
        get("price"),
        get("reputation"),
        get("security-level"),
        attached.security_level_validated,
        _HEALTH.get(health) or Health(health),
        None if egress is None else ForwarderId(str(egress)),
        attached.site or site,
        attached.region,
        attached.provider,
        attached.under_maintenance,
        _ESTIMATED.get(get("confidence"), ()),
    )


_HEALTH = {health.value: health for health in Health}
#: The values an entry's confidence makes estimates. An entry's confidence states how its
#: Computing Time was obtained (GAS is counted, not estimated): ``estimated`` when no
#: instance measured it and the C-SMA reported its configured estimate (5.3.2).
_ESTIMATED: dict[object, tuple[Metric, ...]] = {"estimated": (Metric.COMPUTING_TIME,)}
_DIGITS = 3  # fraction digits of cats-t:milliseconds: one unit is a microsecond


def micros(value: object) -> Micros:
    """A cats-t:milliseconds value in whole microseconds, as :func:`from_ms` computes it.

    libyang prints decimal64 canonically (ASCII digits, at most three fraction digits here,
    no sign since the range starts at 0): those convert with integer arithmetic; any other
    form goes through :func:`from_ms` (Decimal), which also raises for what is not exact.
    """
    if type(value) is str and value.isascii():
        whole, dot, fraction = value.partition(".")
        if whole.isdigit() and (not dot or (fraction.isdigit() and len(fraction) <= _DIGITS)):
            return Micros(int(whole) * 1000 + (int(fraction.ljust(_DIGITS, "0")) if dot else 0))
    return from_ms(str(value))


def _hex(value: str | None) -> int | None:
    return None if value is None else int(value.replace(":", "") or "0", 16)


def nst_entry(item: Mapping[str, Any], now: Timestamp) -> NstEntry:
    """An NST entry from one report path; microsecond delays convert exactly (RFC 8570)."""
    delay = from_us(int(item["delay-us"])) if "delay-us" in item else from_ms(str(item["delay"]))
    jitter = None
    if "jitter-us" in item:
        jitter = from_us(int(item["jitter-us"]))
    elif "jitter" in item:
        jitter = from_ms(str(item["jitter"]))
    attributes = item.get("path-attributes", {})
    return NstEntry(
        ForwarderId(str(item["ingress"])),
        ForwarderId(str(item["egress"])),
        delay,
        last_updated=now,
        jitter=jitter,
        bandwidth=item.get("bandwidth"),
        loss_rate=item.get("loss-rate"),
        attributes=PathAttributes(
            admin_group=_hex(attributes.get("admin-group")),
            color=attributes.get("color"),
            te_metric=attributes.get("te-metric"),
            igp_metric=attributes.get("igp-metric"),
        ),
    )


def reported(item: Mapping[str, Any], names: tuple[str, ...]) -> Json:
    """The pass-through leaves of a report entry."""
    return {name: item[name] for name in names if name in item}


def cst_values(entry: CstEntry) -> tuple[Any, ...]:
    """The values of a CST entry, without its times (for last-changed)."""
    return (
        entry.gas,
        entry.computing_time,
        entry.price,
        entry.reputation,
        entry.security_level,
        entry.security_level_validated,
        entry.health,
        entry.egress,
        entry.site,
        entry.region,
        entry.provider,
        entry.under_maintenance,
        entry.estimated,
    )


def cst_changed(old: CstEntry | None, new: CstEntry) -> bool:
    """Whether a report changed the values of a CST entry (for last-changed): the values of
    :func:`cst_values`, compared one by one, the ones that change most often first."""
    return (
        old is None
        or old.computing_time != new.computing_time
        or old.gas != new.gas
        or old.price != new.price
        or old.health != new.health
        or old.reputation != new.reputation
        or old.security_level != new.security_level
        or old.egress != new.egress
        or old.security_level_validated != new.security_level_validated
        or old.site != new.site
        or old.region != new.region
        or old.provider != new.provider
        or old.under_maintenance != new.under_maintenance
        or old.estimated != new.estimated
    )


def nst_values(entry: NstEntry) -> tuple[Any, ...]:
    """The values of an NST entry, without its time."""
    return (entry.network_delay, entry.jitter, entry.bandwidth, entry.loss_rate, entry.attributes)


def nst_changed(old: NstEntry | None, new: NstEntry) -> bool:
    """Whether a report changed the values of an NST entry (for last-changed)."""
    return old is None or nst_values(old) != nst_values(new)


def refreshed(entry: CstEntry, now: Timestamp, lifetime: float) -> CstEntry:
    """The entry with Last Updated now and its Expiry Time moved on (8, heartbeat)."""
    return replace(entry, last_updated=now, expiry=now + lifetime)
