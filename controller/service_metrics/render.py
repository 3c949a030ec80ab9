"""The CST, NST, report senders and their notifications as RFC 7951 JSON.

``computing-service-table``, ``network-service-table`` and ``report-senders`` of
ietf-cats-service-metrics, rendered only when read, and the ``cst-entry-changed``,
``nst-entry-changed`` and ``report-refused`` notifications (service-metrics-op 6.2.1, 6.2.2, 8,
9). decimal64 and 64-bit counters are strings, as RFC 7951 6.1 writes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from controller.selection.joint import CstEntry, Metric, Micros, NstEntry, to_ms
from controller.selection.units import Timestamp
from controller.service_metrics.ingest import Attribution, Refusal, SenderRecord
from controller.service_metrics.policy import MODULE
from controller.types import Json

GAS_ABOVE_CAPACITY = f"{MODULE}:gas-above-capacity"


def date_and_time(moment: Timestamp) -> str:
    """A yang:date-and-time in UTC with microseconds."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ms(value: Micros) -> str:
    """A cats-t:milliseconds value (decimal64, three fraction digits)."""
    return str(to_ms(value))


def age(now: Timestamp, since: Timestamp) -> str:
    """Milliseconds elapsed from ``since`` to ``now`` (0 if the clock stepped back)."""
    return ms(Micros(max(0, round((now - since) * 1_000_000))))


def _present(values: Json) -> Json:
    return {name: value for name, value in values.items() if value is not None}


def cst_json(
    entry: CstEntry, meta: Attribution, now: Timestamp, observed: Json | None = None
) -> Json:
    """One ``computing-service-table/entry``; an aged-out entry shows GAS 0 in force (8).

    ``observed`` is what feedback gave (section 9); a capped GAS adds gas-above-capacity to
    its flags.
    """
    aged_out = meta.aged_out or entry.expired(now)
    values: Json = {
        "cs-id": entry.cs_id,
        "csci-id": entry.csci_id,
        "gas": 0 if aged_out else entry.gas,
        "reported-gas": meta.reported_gas,
        "computing-time": ms(entry.computing_time),
        "price": entry.price,
        "pending-price-increase": None
        if meta.pending is None
        else {
            "price": meta.pending.price,
            "effective-at": date_and_time(meta.pending.effective_at),
        },
        "reputation": entry.reputation,
        "security-level": entry.security_level,
        "security-level-validated": entry.security_level_validated,
        "health": entry.health.value,
        "egress": entry.egress,
        "site": entry.site,
    }
    reported = dict(meta.reported)
    observed_by = reported.pop("source", None)
    values.update(reported)
    values.update(
        {
            "source": meta.sender,
            "observed-by": observed_by,
            "last-updated": date_and_time(entry.last_updated),
            "last-changed": date_and_time(meta.last_changed),
            "sequence": str(meta.sequence),
            "age": age(now, entry.last_updated),
            "freshness-bound": age(entry.expiry, entry.last_updated),
            "expiry-time": date_and_time(entry.expiry),
            "aged-out": aged_out,
        }
    )
    if meta.capped:
        observed = dict(observed or {})
        observed["flag"] = [*observed.get("flag", ()), GAS_ABOVE_CAPACITY]
    values["observed"] = observed or None
    return _present(values)


def nst_json(entry: NstEntry, meta: Attribution, now: Timestamp, lifetime: float | None) -> Json:
    """One ``network-service-table/entry``; stale past ``network-entry-lifetime``."""
    values: Json = {
        "ingress": entry.ingress,
        "egress": entry.egress,
        "network-delay": ms(entry.network_delay),
        "jitter": None if entry.jitter is None else ms(entry.jitter),
        "bandwidth": entry.bandwidth,
        "loss-rate": entry.loss_rate,
        "delay-reported-in": "microseconds" if meta.delay_in_us else "milliseconds",
    }
    values.update(meta.reported)
    values.update(
        {
            "source": meta.sender,
            "last-updated": date_and_time(entry.last_updated),
            "last-changed": date_and_time(meta.last_changed),
            "sequence": str(meta.sequence),
            "age": age(now, entry.last_updated),
            "stale": meta.aged_out
            or (lifetime is not None and now - entry.last_updated > lifetime),
        }
    )
    return _present(values)


def sender_json(record: SenderRecord, entries: int) -> Json:
    """One ``report-senders/sender`` with its counters."""
    values: Json = {
        "source": record.source,
        "component": f"ietf-cats-types:{record.component}",
        "last-sequence": None if record.last_sequence is None else str(record.last_sequence),
        "last-report": None if record.last_report is None else date_and_time(record.last_report),
        "entries": entries,
        "discontinuity-time": date_and_time(record.discontinuity),
        "counters": {
            "reports-accepted": str(record.reports_accepted),
            "entries-accepted": str(record.entries_accepted),
            "refused-sequence": str(record.refused_sequence),
            "refused-clock-skew": str(record.refused_clock_skew),
            "refused-not-authorized": str(record.refused_not_authorized),
            "rate-limited-dropped": str(record.rate_limited_dropped),
            "rate-limited-throttled": str(record.rate_limited_throttled),
            "price-increases-dampened": str(record.price_increases_dampened),
            "gas-capped": str(record.gas_capped),
        },
    }
    return _present(values)


def cst_event(
    entry: CstEntry, change: str, metrics: Iterable[Metric] = (), *, capped: bool = False
) -> Json:
    """A ``cst-entry-changed`` notification with the values in force after the change."""
    values: Json = {
        "cs-id": entry.cs_id,
        "csci-id": entry.csci_id,
        "change": change,
        "gas": entry.gas,
        "computing-time": ms(entry.computing_time),
        "health": entry.health.value,
    }
    named = [f"{MODULE}:{metric.value}" for metric in metrics]
    if named:
        values["changed-metric"] = named
    if capped:
        values["flag"] = [GAS_ABOVE_CAPACITY]
    return {f"{MODULE}:cst-entry-changed": values}


def nst_event(
    change: str, key: tuple[str, str], new: NstEntry | None, old: NstEntry | None
) -> Json:
    """An ``nst-entry-changed`` notification (``old`` gives previous-network-delay)."""
    values: Json = {"ingress": key[0], "egress": key[1], "change": change}
    if new is not None:
        values["network-delay"] = ms(new.network_delay)
    if old is not None:
        values["previous-network-delay"] = ms(old.network_delay)
    return {f"{MODULE}:nst-entry-changed": values}


def refused_event(
    sender: str, operation: str, sequence: int, refusal: Refusal, entries: int
) -> Json:
    """A ``report-refused`` notification: the whole report, or ``entries`` entries of it."""
    values: Json = {
        "sender": sender,
        "operation": operation,
        "sequence-number": str(sequence),
        "reason": f"{MODULE}:{refusal.reason}",
        "entries": entries,
        "detail": refusal.message,
    }
    return {f"{MODULE}:report-refused": values}
