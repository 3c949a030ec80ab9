"""The CST as reports and time change it (service-metrics-op 6.2.1, 8, 9).

:class:`CstSoftState` applies accepted report-service-metrics reports (full, delta, heartbeat)
entry by entry (ownership, GAS capping, price dampening, delta-threshold significance), ages
entries out past their Expiry Time and purges them a further lifetime later. It runs under
the caller's lock and says what must happen once the lock is released in :class:`Effects`:
the notifications to publish and the entries that became unusable.

Per entry, an unchanged report costs a few dict operations and two small objects: no
notification, no reindexing (the TST index keys on Computing Time, egress and GAS > 0 only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from controller.selection.joint import CstEntry, Metric, SelectionIndex
from controller.selection.units import Timestamp
from controller.service_metrics import control, ingest, render
from controller.service_metrics.control import AGED_OUT, REMOVED, UPDATED
from controller.service_metrics.deadlines import Deadlines
from controller.service_metrics.ingest import (
    NOT_AUTHORIZED,
    OWNED,
    Attribution,
    PendingPrice,
    Tally,
)
from controller.service_metrics.policy import MODULE, Attachment, CpsConfig
from controller.types import CsciId, CsId, Json

Key = tuple[CsId, CsciId]


@dataclass(slots=True)
class Effects:
    """What one report or one sweep did, to act on once the lock is released."""

    notes: list[Json] = field(default_factory=list)  # notifications, in order
    unusable: list[Key] = field(default_factory=list)  # for _entries_unusable
    refused: list[Json] = field(default_factory=list)  # refused-entry / refused-path items
    accepted: int = 0
    dampened: int = 0  # entries of the report whose increase is held back
    new_dampened: int = 0  # increases newly held back (the counter)
    capped: int = 0

    def refuse(self, key: dict[str, str], reason: str, detail: str) -> None:
        """Refuse one entry of a report; the others are applied."""
        self.refused.append({**key, "reason": f"{MODULE}:{reason}", "detail": detail})

    def tally(self, *, throttled: bool = False) -> Tally:
        """The counts for the sender's counters."""
        return Tally(
            self.accepted, len(self.refused), self.new_dampened, self.capped, throttled=throttled
        )


@dataclass(frozen=True, slots=True)
class Applying:
    """One application of reports or of time: the clock, the configuration, the effects."""

    now: Timestamp
    config: CpsConfig
    fx: Effects


@dataclass(frozen=True, slots=True)
class Change:
    """A CST entry whose values changed or that got flagged, to announce or not."""

    key: Key
    old: CstEntry | None  # in force before
    notified: CstEntry | None  # as last announced
    new: CstEntry
    capped: bool
    flagged: bool  # newly capped


@dataclass(frozen=True, slots=True)
class Report:
    """An accepted report as the soft state applies it: who, which, what kind, which site."""

    sender: str
    sequence: int
    kind: str  # control.FULL, DELTA or HEARTBEAT
    site: str | None
    items: Sequence[Json] = ()


class CstSoftState:
    """The CST entries, their attribution, owners, refresh order and pending prices."""

    def __init__(self, index: SelectionIndex, meta: dict[Key, Attribution]) -> None:
        self.index = index
        self.cst = index.cst
        self.meta = meta
        self.owned: dict[str, set[Key]] = {}
        self.expiring: Deadlines[Key] = Deadlines()  # live entries by Expiry Time
        self.aged: dict[Key, Timestamp] = {}  # aged-out entries: when each is purged
        self.purging: Deadlines[Key] = Deadlines()  # the same, by that time
        self.pending: dict[Key, Timestamp] = {}  # dampened price increases: when due

    # ------------------------------------------------------------------ reports

    def report(self, report: Report, ctx: Applying) -> None:
        """Apply an accepted report-service-metrics (8: full, delta or heartbeat)."""
        if report.kind == control.HEARTBEAT:
            self._heartbeat(report, ctx.now, ctx.config.update.lifetime)
            return
        self._entries(report, ctx)
        if report.kind == control.FULL:
            listed = {(item["cs-id"], item["csci-id"]) for item in report.items}
            self.remove_unlisted(report.sender, report.site, listed, ctx)

    def _refusal(
        self, sender: str, item: Json, attachment: Attachment | None, now: Timestamp
    ) -> tuple[str, str] | None:
        """Why one entry is refused (9: authorization, CST poisoning), or None."""
        if not ingest.authorized(attachment, sender):
            return NOT_AUTHORIZED, f"{sender} is not an authorized-sender of {item['csci-id']}"
        meta = self.meta.get((item["cs-id"], item["csci-id"]))
        if meta is None or meta.sender == sender or meta.aged_out:
            return None
        old = self.cst.get(item["cs-id"], item["csci-id"])
        if old is None or now >= old.expiry:
            return None
        return OWNED, f"held for {meta.sender} until {render.date_and_time(old.expiry)}"

    def _entries(self, report: Report, ctx: Applying) -> None:
        """Apply or refuse each entry of a full or delta report (8, 9).

        What is the same for every entry (sender, clock, configuration, Expiry Time) is read
        once; per entry the common case (a known entry of the same sender, no dampening, no
        announcement due) costs the lookups, one CstEntry, one Attribution and the moves of
        the table and deadline indexes. The rare cases go through the methods that say what
        they do (:meth:`_refusal`, :meth:`_price`, :meth:`_announce`, :meth:`_own`).
        """
        sender, sequence, site = report.sender, report.sequence, report.site
        now, fx = ctx.now, ctx.fx
        attachments = ctx.config.attachments
        expiry = now + ctx.config.update.lifetime
        delta = ctx.config.update.delta
        metas, cst, pending_prices = self.meta, self.cst, self.pending
        usable, cst_change, cst_entry = control.usable, control.cst_change, ingest.cst_entry
        changed_values, reported, passed = ingest.cst_changed, ingest.reported, _PASSED
        accepted = capped_count = 0
        for item in report.items:
            key: Key = (item["cs-id"], item["csci-id"])
            attachment = attachments.get(key[1]) if attachments else None
            meta = metas.get(key)
            old = None if meta is None else cst.get(*key)
            if (attachment is not None and attachment.authorized_senders) or (
                meta is not None and meta.sender != sender and not meta.aged_out
            ):
                refusal = self._refusal(sender, item, attachment, now)
                if refusal is not None:
                    fx.refuse(_key_of(item), *refusal)
                    continue
            entry = cst_entry(item, now, expiry, attachment, site)
            capped = entry.gas < item["gas"]
            pending, price_changed = None, now
            if meta is not None and old is not None:
                if entry.price == old.price:
                    if pending_prices:
                        pending_prices.pop(key, None)
                    price_changed = meta.price_changed
                else:
                    entry, pending, price_changed = self._price(key, old, meta, entry, ctx)
            changed = changed_values(old, entry)
            notified = None if meta is None else meta.notified
            flagged = capped and (meta is None or not meta.capped)
            if (changed or flagged) and (
                cst_change(notified, entry, delta, newly_flagged=flagged) is not None
                or (old is not None and not usable(entry, now) and usable(old, now))
            ):
                notified = self._announce(Change(key, old, notified, entry, capped, flagged), ctx)
            self._put(old, entry)
            metas[key] = Attribution(
                sender,
                sequence,
                now if changed or meta is None else meta.last_changed,
                {} if passed.isdisjoint(item) else reported(item, ingest.CST_PASS_THROUGH),
                notified=notified,
                reported_gas=entry.gas,
                capped=capped,
                price_changed=price_changed,
                pending=pending,
            )
            if meta is None or meta.sender != sender:
                self._own(key, sender, None if meta is None else meta.sender)
            self._schedule(key, meta, old, expiry)
            accepted += 1
            capped_count += capped
        fx.accepted += accepted
        fx.capped += capped_count

    def _schedule(
        self, key: Key, meta: Attribution | None, old: CstEntry | None, expiry: Timestamp
    ) -> None:
        """A reported entry lives until ``expiry``; an aged-out one is no longer purged."""
        if meta is None or meta.aged_out:
            self.expiring.move(key, None, expiry)
            if meta is not None:
                self.purging.move(key, self.aged.pop(key, None), None)
        else:
            self.expiring.move(key, None if old is None else old.expiry, expiry)

    def _announce(self, change: Change, ctx: Applying) -> CstEntry | None:
        """Notify a significant change (8) and note an entry that became unusable; returns
        the entry as last announced."""
        old, notified, new = change.old, change.notified, change.new
        delta = ctx.config.update.delta
        kind = control.cst_change(notified, new, delta, newly_flagged=change.flagged)
        if old is not None and control.usable(old, ctx.now) and not control.usable(new, ctx.now):
            ctx.fx.unusable.append(change.key)
            kind = kind or UPDATED  # becoming unusable is always announced
        if kind is None:
            return notified
        metrics = () if notified is None else control.changed_metrics(notified, new)
        ctx.fx.notes.append(render.cst_event(new, kind, metrics, capped=change.capped))
        return new

    def _price(
        self, key: Key, old: CstEntry, meta: Attribution, entry: CstEntry, ctx: Applying
    ) -> tuple[CstEntry, PendingPrice | None, Timestamp]:
        """Price dampening (9): the entry in force, the held-back increase, the price time."""
        if entry.price == old.price:
            self.pending.pop(key, None)
            return entry, None, meta.price_changed
        dampening = ctx.config.update.dampening
        held = control.dampen(old.price, meta.price_changed, entry.price, ctx.now, dampening)
        if held is None:
            self.pending.pop(key, None)
            return entry, None, ctx.now
        ctx.fx.dampened += 1
        ctx.fx.new_dampened += held != meta.pending
        self.pending[key] = held.effective_at
        return replace(entry, price=old.price), held, meta.price_changed

    def _put(self, old: CstEntry | None, entry: CstEntry) -> None:
        """Into the table; through the TST index only when a key it orders by changed."""
        if (
            old is not None
            and old.computing_time == entry.computing_time
            and old.egress == entry.egress
            and (old.gas > 0) == (entry.gas > 0)
        ):
            self.cst.put(entry)
        else:
            self.index.put_cst(entry)

    def _own(self, key: Key, sender: str, previous: str | None) -> None:
        if previous is not None:
            self.owned[previous].discard(key)
        self.owned.setdefault(sender, set()).add(key)

    def _heartbeat(self, report: Report, now: Timestamp, lifetime: float) -> None:
        """Refresh the live entries of the sender (of the site) without changing values (8)."""
        for key in self.owned.get(report.sender, ()):
            entry, meta = self.cst.get(*key), self.meta[key]
            if entry is None or meta.aged_out or now >= entry.expiry:
                continue  # aged out: only a report with values brings it back
            if report.site is not None and entry.site != report.site:
                continue
            fresh = ingest.refreshed(entry, now, lifetime)
            self.cst.put(fresh)
            self.meta[key] = meta._replace(sequence=report.sequence)
            self.expiring.move(key, entry.expiry, fresh.expiry)

    def remove_unlisted(
        self, sender: str, site: str | None, listed: set[Key], ctx: Applying
    ) -> None:
        """A full report: the sender's entries (of the site) it does not list are removed."""
        gone = [
            key
            for key in self.owned.get(sender, ())
            if key not in listed and (site is None or _site(self.cst.get(*key)) == site)
        ]
        for key in gone:
            self.remove(key, ctx.fx)

    def remove(self, key: Key, fx: Effects) -> None:
        """Remove an entry from the CST (cst-entry-changed removed)."""
        old = self.cst.get(*key)
        meta = self.meta.pop(key)
        self.index.remove_cst(*key)
        self.owned[meta.sender].discard(key)
        self.expiring.move(key, None if old is None or meta.aged_out else old.expiry, None)
        self.purging.move(key, self.aged.pop(key, None), None)
        self.pending.pop(key, None)
        if old is not None:
            fx.notes.append(render.cst_event(replace(old, gas=0), REMOVED, capped=meta.capped))
        fx.unusable.append(key)  # gone: sessions re-routed, what feedback kept forgotten

    # ------------------------------------------------------------------ time

    def sweep(self, now: Timestamp, lifetime: float, fx: Effects) -> None:
        """Apply the dampened prices due, age out expired entries, purge aged ones (8, 9)."""
        for key in [k for k, due in self.pending.items() if due <= now]:
            self._apply_pending(key, now, fx)
        for key in self.expiring.due(now, self._expiry):
            self._age_out(key, lifetime, fx)
        for key in self.purging.due(now, self.aged.get):
            self.remove(key, fx)

    def _expiry(self, key: Key) -> Timestamp | None:
        entry, meta = self.cst.get(*key), self.meta.get(key)
        return None if entry is None or meta is None or meta.aged_out else entry.expiry

    def _age_out(self, key: Key, lifetime: float, fx: Effects) -> None:
        """Soft-state aging (6.2.1, 8): GAS 0 in force; purged after a further lifetime."""
        entry, meta = self.cst.get(*key), self.meta.get(key)
        if entry is None or meta is None:
            return
        aged = replace(entry, gas=0)
        self.index.put_cst(aged)
        self.meta[key] = meta._replace(aged_out=True, notified=aged, pending=None)
        self.pending.pop(key, None)
        self.aged[key] = entry.expiry + lifetime
        self.purging.move(key, None, self.aged[key])
        fx.notes.append(render.cst_event(aged, AGED_OUT, capped=meta.capped))
        if entry.gas > 0 and entry.health not in control.UNUSABLE_HEALTH:
            fx.unusable.append(key)

    def _apply_pending(self, key: Key, now: Timestamp, fx: Effects) -> None:
        """A dampened price increase takes effect once its window has passed (9)."""
        del self.pending[key]
        entry, meta = self.cst.get(*key), self.meta.get(key)
        if entry is None or meta is None or meta.pending is None:
            return
        raised = replace(entry, price=meta.pending.price)
        self.cst.put(raised)  # the price is no key of the TST index
        self.meta[key] = meta._replace(
            pending=None, price_changed=now, last_changed=now, notified=raised
        )
        fx.notes.append(render.cst_event(raised, UPDATED, (Metric.PRICE,), capped=meta.capped))


_PASSED = frozenset(ingest.CST_PASS_THROUGH)


def _key_of(item: Json) -> dict[str, str]:
    return {"cs-id": item["cs-id"], "csci-id": item["csci-id"]}


def _site(entry: CstEntry | None) -> str | None:
    return None if entry is None else entry.site
