"""The ingest of metric reports: admission, throttling and the sender ledger (8, 9).

:class:`ReportIngest` decides whether a report is accepted (sequence number, clock skew, rate
limit per sender), applies it to the CST or NST soft state at once or holds it until the end of
the rate-limit interval (throttle), and keeps the per-sender ledger that
:mod:`controller.service_metrics.ledger` persists. Every method runs under the service's
lock and puts what must follow outside the lock into an :class:`Effects`; a refused report
raises after its report-refused notification is in the effects.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.selection.joint import SelectionIndex
from controller.selection.units import Timestamp
from controller.service_metrics import control, identifiers, ingest, render
from controller.service_metrics.control import Held, RateWindow
from controller.service_metrics.ingest import (
    COMPONENT,
    NETWORK_REPORT,
    RATE_LIMITED,
    SERVICE_REPORT,
    Attribution,
    Refusal,
    SenderRecord,
    Tally,
)
from controller.service_metrics.paths import NstSoftState, PathKey
from controller.service_metrics.softstate import Applying, CstSoftState, Effects, Key, Report
from controller.types import Json

#: The list of entries of each report operation.
_ITEMS = {SERVICE_REPORT: "entry", NETWORK_REPORT: "path"}
_REFUSED = {SERVICE_REPORT: "refused-entry", NETWORK_REPORT: "refused-path"}
LEDGER_PERIOD = 1.0
"""Seconds between two writes of the sender ledger (write-behind)."""


class ReportIngest:
    """Senders, rate windows, held reports and the CST and NST soft state."""

    def __init__(
        self,
        index: SelectionIndex,
        cst_meta: dict[Key, Attribution],
        nst_meta: dict[PathKey, Attribution],
        senders: dict[str, SenderRecord],
    ) -> None:
        self.cst = CstSoftState(index, cst_meta)
        self.nst = NstSoftState(index, nst_meta)
        self.senders = senders
        self.rates: dict[str, RateWindow] = {}
        self.held: dict[tuple[str, str], Held] = {}
        self.dirty = False  # the ledger changed since it was last written
        self.written = 0.0  # when it was last written

    # ------------------------------------------------------------------ reports

    def report(self, operation: str, sender: str, members: Json, ctx: Applying) -> Json:
        """One report-service-metrics or report-network-metrics: its reply, or CatsError."""
        now = ctx.now
        held = self.held.get((operation, sender))
        if held is not None and held.due <= now:
            self._release(operation, sender, ctx)
        items: Sequence[Json] = identifiers.items_as_text(members.get(_ITEMS[operation], ()))
        sequence = int(members["sequence-number"])
        record, deferred = self._admit(operation, sender, members, ctx)
        kind = str(members.get("report-type", control.DELTA))
        site = members.get("site")
        self.dirty = True
        if deferred is not None:
            self._hold(operation, sender, Report(sender, sequence, kind, site, items), deferred)
            self.senders[sender] = ingest.accepted(record, sequence, now, Tally(throttled=True))
            return {
                "accepted-entries": len(items),
                "deferred-until": render.date_and_time(deferred),
            }
        mine = Applying(now, ctx.config, Effects())
        self._apply(operation, Report(sender, sequence, kind, site, items), mine)
        self.senders[sender] = ingest.accepted(record, sequence, now, mine.fx.tally())
        _merge(ctx.fx, mine.fx, _entry_refusals(sender, operation, sequence, mine.fx.refused))
        reply: Json = {"accepted-entries": mine.fx.accepted}
        if mine.fx.dampened:
            reply["dampened-entries"] = mine.fx.dampened
        if mine.fx.refused:
            reply[_REFUSED[operation]] = mine.fx.refused
        return reply

    def _admit(
        self, operation: str, sender: str, members: Json, ctx: Applying
    ) -> tuple[SenderRecord, Timestamp | None]:
        """Sequence, clock skew and rate limit (8, 9): the sender's record and, for a
        throttled report, when its values apply. Refuses the report (changing nothing but
        the counters) by raising."""
        now, config = ctx.now, ctx.config
        sequence = int(members["sequence-number"])
        timestamp = ingest.parse_time(str(members["timestamp"]))
        record = self.senders.get(sender) or SenderRecord(sender, COMPONENT[operation], now)
        refusal = ingest.check_report(
            record, sequence, timestamp, now, config.update.max_clock_skew
        )
        deferred = None
        limit = config.update.rate_limit
        if refusal is None and limit.enabled:
            window, excess = control.rate(self.rates.get(sender), now, limit)
            self.rates[sender] = window
            if excess and limit.throttle:
                deferred = window.end(limit)
            elif excess:
                message = (
                    f"{sender} exceeded {limit.max_reports} reports per {limit.interval} s; "
                    f"retry after {render.date_and_time(window.end(limit))}"
                )
                refusal = Refusal(RATE_LIMITED, message, None, tag="resource-denied")
        if refusal is not None:
            self.senders[sender] = ingest.refused(record, refusal.reason)
            self.dirty = True
            entries = len(members.get(_ITEMS[operation], ()))
            ctx.fx.notes.append(render.refused_event(sender, operation, sequence, refusal, entries))
            raise refusal.error(operation)
        return record, deferred

    def _apply(self, operation: str, report: Report, ctx: Applying) -> None:
        if operation == SERVICE_REPORT:
            self.cst.report(report, ctx)
        else:
            self.nst.report(report, ctx)

    def _hold(self, operation: str, sender: str, report: Report, due: Timestamp) -> None:
        """Throttle (8): fold the report into the sender's held values, applied at ``due``."""
        names = ("cs-id", "csci-id") if operation == SERVICE_REPORT else ("ingress", "egress")
        items = [((item[names[0]], item[names[1]]), item) for item in report.items]
        held = self.held.setdefault((operation, sender), Held(due, report.sequence))
        held.hold(report.sequence, report.kind, report.site, items)

    def _release(self, operation: str, sender: str, ctx: Applying) -> None:
        """Apply a throttled sender's newest values at the end of the interval (8)."""
        held = self.held.pop((operation, sender))
        mine = Applying(ctx.now, ctx.config, Effects())
        for site in held.heartbeats:
            self._apply(operation, Report(sender, held.sequence, control.HEARTBEAT, site), mine)
        by_site: dict[str | None, list[Json]] = {}
        for item, site in held.entries.values():
            by_site.setdefault(site, []).append(item)
        for site, items in by_site.items():
            self._apply(operation, Report(sender, held.sequence, control.DELTA, site, items), mine)
        for site, listed in held.full.items():
            if operation == SERVICE_REPORT:
                self.cst.remove_unlisted(sender, site, listed, mine)  # type: ignore[arg-type]
            else:
                self.nst.remove_unlisted(sender, listed, mine.fx)  # type: ignore[arg-type]
        record = self.senders.get(sender)
        if record is not None:
            self.senders[sender] = ingest.accepted(record, None, ctx.now, mine.fx.tally())
            self.dirty = True
        refusals = _entry_refusals(sender, operation, held.sequence, mine.fx.refused)
        _merge(ctx.fx, mine.fx, refusals)

    # ------------------------------------------------------------------ time

    def sweep(self, ctx: Applying) -> None:
        """Held reports due, dampened prices due, aging of the CST and the NST (8, 9)."""
        for operation, sender in [k for k, held in self.held.items() if held.due <= ctx.now]:
            self._release(operation, sender, ctx)
        update = ctx.config.update
        self.cst.sweep(ctx.now, update.lifetime, ctx.fx)
        self.nst.sweep(ctx.now, update.network_entry_lifetime, ctx.fx)

    def ledger_due(self, now: Timestamp) -> dict[str, SenderRecord] | None:
        """A copy of the ledger to write, when it changed and the last write is old enough."""
        if not self.dirty or now - self.written < LEDGER_PERIOD:
            return None
        return self.take_ledger(now)

    def take_ledger(self, now: Timestamp) -> dict[str, SenderRecord]:
        """A copy of the ledger to write now."""
        self.dirty = False
        self.written = now
        return dict(self.senders)


def _entry_refusals(sender: str, operation: str, sequence: int, refused: list[Json]) -> list[Json]:
    """One report-refused per refusal reason of the entries of a report."""
    counts: dict[str, int] = {}
    for item in refused:
        counts[item["reason"]] = counts.get(item["reason"], 0) + 1
    return [
        render.refused_event(
            sender,
            operation,
            sequence,
            Refusal(reason.rpartition(":")[2], f"{count} entries refused", None),
            count,
        )
        for reason, count in counts.items()
    ]


def _merge(fx: Effects, mine: Effects, notes: list[Json]) -> None:
    fx.notes.extend(mine.notes)
    fx.notes.extend(notes)
    fx.unusable.extend(mine.unusable)
