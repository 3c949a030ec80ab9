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
from typing import Any

from controller.cps.policy import Attachment, Json, UpdateControl
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.selection import (
    CsciId,
    CsId,
    CstEntry,
    ForwarderId,
    Health,
    NstEntry,
    PathAttributes,
    from_ms,
    from_us,
)
from controller.selection.units import Timestamp

SERVICE_REPORT = "report-service-metrics"
NETWORK_REPORT = "report-network-metrics"
#: The cats-t:component of the sender of each report operation.
COMPONENT = {SERVICE_REPORT: "c-sma", NETWORK_REPORT: "c-nma"}

#: Leaves of a CST report entry kept as reported and rendered back in the CST.
CST_PASS_THROUGH = (
    "computing-time-statistics",
    "measurement-window",
    "aggregated",
    "collected-at",
    "freshness-bound",
    "confidence",
    "source",  # rendered as observed-by: the SCI that measured, not the sender
)
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


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a whole report is refused: a report-refusal-reason identity and a message."""

    reason: str
    message: str
    leaf: str

    def error(self, operation: str) -> CatsError:
        """The error the RPC answers with (tag invalid-value, app-tag the reason)."""
        path = f"/ietf-cats-service-metrics:{operation}/{self.leaf}"
        return CatsError(
            ErrorItem(ErrorType.APPLICATION, "invalid-value", self.message, path, self.reason)
        )


def check_report(
    record: SenderRecord, sequence: int, timestamp: Timestamp, now: Timestamp, max_skew: float
) -> Refusal | None:
    """The sequence and clock checks of a report (service-metrics-op 8), or None if it passes."""
    last = record.last_sequence
    if last is not None and sequence <= last:
        message = f"sequence-number {sequence} of {record.source} does not exceed {last}"
        return Refusal("sequence-not-increasing", message, "sequence-number")
    skew = timestamp - now
    if abs(skew) > max_skew:
        message = f"timestamp is {skew:+.3f} s from the C-PS clock (max-clock-skew {max_skew} s)"
        return Refusal("clock-skew-exceeded", message, "timestamp")
    return None


def refused(record: SenderRecord, reason: str) -> SenderRecord:
    """The record after a refused report."""
    if reason == "sequence-not-increasing":
        return replace(record, refused_sequence=record.refused_sequence + 1)
    return replace(record, refused_clock_skew=record.refused_clock_skew + 1)


def accepted(
    record: SenderRecord, sequence: int, now: Timestamp, entries: int, *, refused_entries: int
) -> SenderRecord:
    """The record after an accepted report of ``entries`` entries."""
    return replace(
        record,
        last_sequence=sequence,
        last_report=now,
        reports_accepted=record.reports_accepted + 1,
        entries_accepted=record.entries_accepted + entries,
        refused_not_authorized=record.refused_not_authorized + refused_entries,
    )


@dataclass(frozen=True, slots=True)
class Attribution:
    """What the tables keep of an entry beyond the selection core's values."""

    sender: str
    sequence: int
    last_changed: Timestamp
    reported: Json = field(default_factory=dict)  # pass-through leaves, as reported
    delay_in_us: bool = field(default=False, kw_only=True)  # NST: delay-us was reported


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
    update: UpdateControl,
    attachment: Attachment | None,
    site: str | None,
) -> CstEntry:
    """A CST entry from one report entry; the configured attachment wins over the report."""
    attached = attachment or Attachment()
    egress = attached.egress or item.get("egress")
    return CstEntry(
        CsId(str(item["cs-id"])),
        CsciId(str(item["csci-id"])),
        int(item["gas"]),
        from_ms(str(item["computing-time"])),
        last_updated=now,
        expiry=now + update.lifetime,
        price=item.get("price"),
        reputation=item.get("reputation"),
        security_level=item.get("security-level"),
        security_level_validated=attached.security_level_validated,
        health=Health(item.get("health", "unknown")),
        egress=None if egress is None else ForwarderId(str(egress)),
        site=attached.site or site,
        region=attached.region,
        provider=attached.provider,
        under_maintenance=attached.under_maintenance,
    )


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


def cst_changed(old: CstEntry | None, new: CstEntry) -> bool:
    """Whether a report changed the values of a CST entry (for last-changed)."""
    if old is None:
        return True
    return replace(old, last_updated=new.last_updated, expiry=new.expiry) != new


def nst_changed(old: NstEntry | None, new: NstEntry) -> bool:
    """Whether a report changed the values of an NST entry (for last-changed)."""
    return old is None or replace(old, last_updated=new.last_updated) != new
