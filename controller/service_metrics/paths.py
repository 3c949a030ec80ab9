"""The NST as reports and time change it (service-metrics-op 6.2.2, 8, 9).

:class:`NstSoftState` applies accepted report-network-metrics reports (full or delta) path by
path, with the same ownership rule as the CST: a path held for another C-NMA is refused until
it has gone stale. Past ``network-entry-lifetime`` a path is stale (nst-entry-changed stale;
the Joint Selection no longer uses it) and it is purged a further lifetime later.
"""

from __future__ import annotations

from dataclasses import replace

from controller.selection.joint import SelectionIndex
from controller.selection.units import Timestamp
from controller.service_metrics import control, ingest, render
from controller.service_metrics.control import ADDED, REMOVED, STALE, UPDATED
from controller.service_metrics.deadlines import Deadlines
from controller.service_metrics.ingest import Attribution
from controller.service_metrics.softstate import Applying, Effects, Report
from controller.types import ForwarderId

PathKey = tuple[ForwarderId, ForwarderId]


class NstSoftState:
    """The NST entries, their attribution, owners and refresh order."""

    def __init__(self, index: SelectionIndex, meta: dict[PathKey, Attribution]) -> None:
        self.index = index
        self.nst = index.nst
        self.meta = meta
        self.owned: dict[str, set[PathKey]] = {}
        self.lifetime: float | None = None  # network-entry-lifetime of the deadlines
        self.staling: Deadlines[PathKey] = Deadlines()  # live paths by when they go stale
        self.stale: dict[PathKey, Timestamp] = {}  # stale paths: when each is purged
        self.purging: Deadlines[PathKey] = Deadlines()  # the same, by that time

    def report(self, report: Report, ctx: Applying) -> None:
        """Apply an accepted report-network-metrics (full or delta)."""
        lifetime = self._lifetime(ctx.config.update.network_entry_lifetime)
        if report.kind == control.HEARTBEAT:
            self._heartbeat(report, ctx.now)
            return
        for item in report.items:
            self._path(report, item, lifetime, ctx)
        if report.kind == control.FULL:
            listed = {(item["ingress"], item["egress"]) for item in report.items}
            self.remove_unlisted(report.sender, listed, ctx.fx)

    def _heartbeat(self, report: Report, now: Timestamp) -> None:
        """Refresh the sender's paths that are not stale, values unchanged (8)."""
        for key in self.owned.get(report.sender, ()):
            entry, meta = self.nst.get(*key), self.meta[key]
            if entry is None or meta.aged_out:
                continue
            if self.lifetime is not None and now - entry.last_updated > self.lifetime:
                continue  # stale, the sweeper says so: only a report with values revives it
            self.index.put_nst(replace(entry, last_updated=now))
            self.meta[key] = meta._replace(sequence=report.sequence)
            if self.lifetime is not None:
                self.staling.move(key, entry.last_updated + self.lifetime, now + self.lifetime)

    def remove_unlisted(self, sender: str, listed: set[PathKey], fx: Effects) -> None:
        """A full report: the sender's paths it does not list are removed."""
        for key in [k for k in self.owned.get(sender, ()) if k not in listed]:
            self.remove(key, fx)

    def _path(
        self, report: Report, item: dict[str, object], lifetime: float | None, ctx: Applying
    ) -> None:
        now, fx = ctx.now, ctx.fx
        key: PathKey = (ForwarderId(str(item["ingress"])), ForwarderId(str(item["egress"])))
        meta = self.meta.get(key)
        old = None if meta is None else self.nst.get(*key)
        if meta is not None and old is not None and meta.sender != report.sender:
            fresh = lifetime is None or now - old.last_updated <= lifetime
            if not meta.aged_out and fresh:
                detail = f"held for {meta.sender}"
                fx.refuse({"ingress": key[0], "egress": key[1]}, ingest.OWNED, detail)
                return
        entry = ingest.nst_entry(item, now)
        changed = ingest.nst_changed(old, entry)
        revived = meta is not None and meta.aged_out
        if changed or revived:
            fx.notes.append(render.nst_event(ADDED if old is None else UPDATED, key, entry, old))
        self.index.put_nst(entry)
        self.meta[key] = Attribution(
            report.sender,
            report.sequence,
            now if changed or meta is None else meta.last_changed,
            ingest.reported(item, ingest.NST_PASS_THROUGH),
            delay_in_us="delay-us" in item,
        )
        if meta is None or meta.sender != report.sender:
            if meta is not None:
                self.owned[meta.sender].discard(key)
            self.owned.setdefault(report.sender, set()).add(key)
        if lifetime is not None:
            live = old is not None and meta is not None and not meta.aged_out
            before = old.last_updated + lifetime if old is not None and live else None
            self.staling.move(key, before, now + lifetime)
        self.purging.move(key, self.stale.pop(key, None), None)
        fx.accepted += 1

    def remove(self, key: PathKey, fx: Effects) -> None:
        """Remove a path from the NST (nst-entry-changed removed)."""
        old = self.nst.get(*key)
        meta = self.meta.pop(key)
        self.index.remove_nst(*key)
        self.owned[meta.sender].discard(key)
        if old is not None and self.lifetime is not None and not meta.aged_out:
            self.staling.move(key, old.last_updated + self.lifetime, None)
        self.purging.move(key, self.stale.pop(key, None), None)
        fx.notes.append(render.nst_event(REMOVED, key, None, old))

    def sweep(self, now: Timestamp, lifetime: float | None, fx: Effects) -> None:
        """Paths past network-entry-lifetime go stale; stale ones are purged a lifetime later."""
        lifetime = self._lifetime(lifetime)
        if lifetime is None:
            return
        for key in self.staling.due(now, self._stale_at):
            entry = self.nst.get(*key)
            if entry is None or now - entry.last_updated <= lifetime:
                self.staling.move(key, None, self._stale_at(key))  # strictly after: later
                continue
            self.meta[key] = self.meta[key]._replace(aged_out=True)
            self.stale[key] = entry.last_updated + 2 * lifetime
            self.purging.move(key, None, self.stale[key])
            fx.notes.append(render.nst_event(STALE, key, entry, None))
        for key in self.purging.due(now, self.stale.get):
            if now - self.stale[key] > 0:
                self.remove(key, fx)
            else:
                self.purging.move(key, None, self.stale[key])

    def _stale_at(self, key: PathKey) -> Timestamp | None:
        entry, meta = self.nst.get(*key), self.meta.get(key)
        if entry is None or meta is None or meta.aged_out or self.lifetime is None:
            return None
        return entry.last_updated + self.lifetime

    def _lifetime(self, lifetime: float | None) -> float | None:
        """The lifetime in force; when it changed, every live path gets a new deadline."""
        if lifetime != self.lifetime:
            self.lifetime = lifetime
            self.staling.clear()
            for key in self.meta.keys() - self.stale.keys():
                self.staling.move(key, None, self._stale_at(key))
        return lifetime
