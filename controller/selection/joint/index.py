"""The TST index and the fast ``select`` (service-metrics-op 6.2.3, 6.2.4 Hierarchical
Selection's concern for scale, without its loss of optimality).

For each CS-ID the index keeps, per Egress CATS-Forwarder, the entries with GAS > 0 ordered by
Computing Time. For each (CS-ID, Ingress) asked about it keeps the egresses ordered by the TST
of their best entry (Network Delay + smallest Computing Time). A decision merges these lists
lazily, best-first, so it visits candidates in increasing TST and stops as soon as the winner
is certain: at the first feasible candidate (plus its ties and one runner-up) when constraints
filter, after one or two candidates when none do. A CST change touches one egress list and its
key in each (CS-ID, Ingress) view; an NST change touches one key per CS-ID view of the ingress.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from controller.selection.joint.tables import (
    ComputingServiceTable,
    CstEntry,
    NetworkServiceTable,
    NstEntry,
)
from controller.selection.units import Micros
from controller.types import CsciId, CsId, ForwarderId

Head = tuple[int, CsciId]
"""(Computing Time, CSCI-ID): one entry in an egress list."""


@dataclass(slots=True)
class _View:
    """Egresses of one (CS-ID, Ingress) ordered by their best TST."""

    order: list[tuple[int, ForwarderId]] = field(default_factory=list)
    keys: dict[ForwarderId, int] = field(default_factory=dict)


class SelectionIndex:
    """The CST and NST with the orderings the fast path reads, kept current on every update."""

    def __init__(self) -> None:
        self.cst = ComputingServiceTable()
        self.nst = NetworkServiceTable()
        self._lists: dict[CsId, dict[ForwarderId, list[Head]]] = {}
        self._views_by_cs: dict[CsId, dict[ForwarderId, _View]] = {}
        self._views_by_ingress: dict[ForwarderId, dict[CsId, _View]] = {}

    # -- updates --------------------------------------------------------------------------

    def put_cst(self, entry: CstEntry) -> None:
        """Insert or replace a CST entry (a C-SMA report, aging to GAS 0, an attachment)."""
        old = self.cst.put(entry)
        self._reindex_entry(entry.cs_id, old, entry)

    def remove_cst(self, cs_id: CsId, csci_id: CsciId) -> None:
        """Withdraw a CST entry."""
        old = self.cst.remove(cs_id, csci_id)
        if old is not None:
            self._reindex_entry(cs_id, old, None)

    def put_nst(self, entry: NstEntry) -> None:
        """Insert or replace an NST entry (a C-NMA report)."""
        self.nst.put(entry)
        self._refresh_egress(entry.ingress, entry.egress)

    def remove_nst(self, ingress: ForwarderId, egress: ForwarderId) -> None:
        """Withdraw an NST entry."""
        if self.nst.remove(ingress, egress) is not None:
            self._refresh_egress(ingress, egress)

    def _reindex_entry(self, cs_id: CsId, old: CstEntry | None, new: CstEntry | None) -> None:
        if (
            old is not None
            and new is not None
            and old.egress is not None
            and old.egress == new.egress
            and old.gas > 0
            and new.gas > 0
        ):
            self._move_entry(
                cs_id, old.egress, old, new
            )  # the steady state of reporting: values moved
            return
        lists = self._lists.setdefault(cs_id, {})
        touched: dict[ForwarderId, Head | None] = {}
        for entry, insert in ((old, False), (new, True)):
            if entry is None or entry.egress is None or entry.gas <= 0:
                continue
            items = lists.setdefault(entry.egress, [])
            touched.setdefault(entry.egress, items[0] if items else None)
            head = (entry.computing_time, entry.csci_id)
            if insert:
                bisect.insort(items, head)
            else:
                del items[bisect.bisect_left(items, head)]
                if not items:
                    del lists[entry.egress]
        for egress, before in touched.items():
            remaining = lists.get(egress)
            if (remaining[0] if remaining else None) != before:
                for ingress, view in self._views_by_cs.get(cs_id, {}).items():
                    self._refresh(view, cs_id, ingress, egress)

    def _move_entry(self, cs_id: CsId, egress: ForwarderId, old: CstEntry, new: CstEntry) -> None:
        """An entry that stays usable behind the same egress: one list, re-sorted in place;
        the views hear of it only when the head of that list changed."""
        items = self._lists[cs_id][egress]
        before = items[0]
        del items[bisect.bisect_left(items, (old.computing_time, old.csci_id))]
        bisect.insort(items, (new.computing_time, new.csci_id))
        if items[0] != before:
            for ingress, view in self._views_by_cs.get(cs_id, {}).items():
                self._refresh(view, cs_id, ingress, egress)

    def _refresh_egress(self, ingress: ForwarderId, egress: ForwarderId) -> None:
        for cs_id, view in self._views_by_ingress.get(ingress, {}).items():
            self._refresh(view, cs_id, ingress, egress)

    def _key(self, cs_id: CsId, ingress: ForwarderId, egress: ForwarderId) -> int | None:
        items = self._lists.get(cs_id, {}).get(egress)
        path = self.nst.get(ingress, egress)
        if not items or path is None:
            return None
        return path.network_delay + items[0][0]

    def _refresh(self, view: _View, cs_id: CsId, ingress: ForwarderId, egress: ForwarderId) -> None:
        new = self._key(cs_id, ingress, egress)
        old = view.keys.get(egress)
        if new == old:
            return
        if old is not None:
            del view.order[bisect.bisect_left(view.order, (old, egress))]
            del view.keys[egress]
        if new is not None:
            bisect.insort(view.order, (new, egress))
            view.keys[egress] = new

    def view(self, cs_id: CsId, ingress: ForwarderId) -> _View:
        """The (CS-ID, Ingress) ordering, built on first use and maintained afterwards."""
        views = self._views_by_cs.setdefault(cs_id, {})
        found = views.get(ingress)
        if found is None:
            found = _View()
            for egress in self._lists.get(cs_id, {}):
                key = self._key(cs_id, ingress, egress)
                if key is not None:
                    found.order.append((key, egress))
                    found.keys[egress] = key
            found.order.sort()
            views[ingress] = found
            self._views_by_ingress.setdefault(ingress, {})[cs_id] = found
        return found

    def by_tst(
        self,
        cs_id: CsId,
        ingress: ForwarderId,
        usable: Callable[[NstEntry], bool] | None = None,
    ) -> Iterator[tuple[Micros, CstEntry, NstEntry]]:
        """Every (entry, path) with GAS > 0 and an NST entry, in increasing TST.

        A lazy k-way merge: an egress list is opened only when its best TST comes up. When
        ``usable`` rejects the path of an egress, only its first entry is produced: every
        candidate behind that egress shares the path and would fail the same way.
        """
        order = self.view(cs_id, ingress).order
        lists = self._lists.get(cs_id, {})
        paths = self.nst.from_ingress(ingress)
        entries = self.cst.service(cs_id)
        heap: list[tuple[int, ForwarderId, int]] = []
        opened = 0
        while True:
            if opened < len(order) and (not heap or order[opened][0] <= heap[0][0]):
                tst, egress = order[opened]
                opened += 1
                position = 0
                path = paths[egress]
                if usable is not None and not usable(path):
                    yield Micros(tst), entries[lists[egress][0][1]], path
                    continue
            elif heap:
                tst, egress, position = heapq.heappop(heap)
                path = paths[egress]
            else:
                return
            items = lists[egress]
            if position + 1 < len(items):
                following = path.network_delay + items[position + 1][0]
                heapq.heappush(heap, (following, egress, position + 1))
            yield Micros(tst), entries[items[position][1]], path
