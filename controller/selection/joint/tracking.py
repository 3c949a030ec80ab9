"""A :class:`SelectionIndex` that remembers what changed since it was last asked.

The C-PS re-evaluates the steering of its ingress forwarders after a change of its tables
(service-metrics-op 6.2.3 step 7, 6.2.5 re-routing, 8 update control): a CST change concerns
the CS-ID of the entry at every ingress, an NST change every CS-ID at the path's ingress.
:class:`TrackedIndex` records exactly that on every update, so the southbound recomputes only
the affected (CS-ID, ingress) pairs. The caller serialises updates and :meth:`take_changes`
(the C-PS's lock).
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.selection.joint.index import SelectionIndex
from controller.selection.joint.tables import CstEntry, NstEntry
from controller.types import CsciId, CsId, ForwarderId


@dataclass(frozen=True, slots=True)
class TableChanges:
    """The CS-IDs whose CST entries and the ingresses whose NST paths changed."""

    cs_ids: frozenset[CsId] = frozenset()
    ingresses: frozenset[ForwarderId] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.cs_ids or self.ingresses)

    def concerns(self, cs_id: CsId, ingress: ForwarderId) -> bool:
        """Whether the selection of ``cs_id`` at ``ingress`` may have changed."""
        return cs_id in self.cs_ids or ingress in self.ingresses

    def merged(self, other: TableChanges) -> TableChanges:
        """Both sets of changes."""
        return TableChanges(self.cs_ids | other.cs_ids, self.ingresses | other.ingresses)


class TrackedIndex(SelectionIndex):
    """The selection index, recording the CS-IDs and ingresses its updates touched."""

    def __init__(self) -> None:
        super().__init__()
        self._cs_ids: set[CsId] = set()
        self._ingresses: set[ForwarderId] = set()

    def put_cst(self, entry: CstEntry) -> None:
        """Insert or replace a CST entry; its CS-ID changed."""
        super().put_cst(entry)
        self._cs_ids.add(entry.cs_id)

    def remove_cst(self, cs_id: CsId, csci_id: CsciId) -> None:
        """Withdraw a CST entry; its CS-ID changed."""
        super().remove_cst(cs_id, csci_id)
        self._cs_ids.add(cs_id)

    def put_nst(self, entry: NstEntry) -> None:
        """Insert or replace an NST entry; its ingress changed."""
        super().put_nst(entry)
        self._ingresses.add(entry.ingress)

    def remove_nst(self, ingress: ForwarderId, egress: ForwarderId) -> None:
        """Withdraw an NST entry; its ingress changed."""
        super().remove_nst(ingress, egress)
        self._ingresses.add(ingress)

    def take_changes(self) -> TableChanges:
        """What changed since the last call (and forget it)."""
        changes = TableChanges(frozenset(self._cs_ids), frozenset(self._ingresses))
        self._cs_ids.clear()
        self._ingresses.clear()
        return changes
