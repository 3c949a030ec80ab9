"""Dispatch accounting: the C-PS counts its own selections between two reports of an entry
(update-control/dispatch-accounting; service-metrics-op 8 leaves open what the C-PS does
between reports).

A report says what an instance was doing when it was collected. Every selection the C-PS made
since then, and that reached the instance after that, is in no report yet: without counting
it, every decision until the next report sees the same idle-looking instance, and all of them
go there (herding on stale load reports). With accounting enabled, a decision sees each entry
as reported plus the selections not yet reflected: GAS reduced by ``gas_per_selection`` per
selection, the waiting work grown by each selection's work and drained at one second per
second since (a virtual queue), and the state a selection will leave behind (its working set)
held there. The values so obtained are estimates and are marked as such.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from controller.selection.units import Micros, Timestamp
from controller.types import CsciId, ReuseKey, TenantId

Key = tuple[TenantId, ReuseKey]


@dataclass(frozen=True, slots=True)
class DispatchAccounting:
    """``update-control/dispatch-accounting``.

    ``computing_time_per_selection`` is the work a selection adds when the selection carries
    no estimate of its own (a select-service request says nothing of its size); None: 0.
    """

    enabled: bool = False
    gas_per_selection: int = 1
    computing_time_per_selection: Micros | None = None


@dataclass(frozen=True, slots=True)
class Dispatch:
    """One selection: when its request reaches the instance (selection time plus the
    forwarding delay), the seconds of work it adds there (None: the configured default), the
    working-set elements it leaves held there, and when that work is expected done (the
    waiting work ahead of it plus its own; None: on arrival).

    A load report collected after ``at`` reflects the selection's queued work; a state
    report reflects its elements only once they are held, after ``done``.
    """

    at: Timestamp
    work: float | None = None
    keys: frozenset[Key] = frozenset()
    done: Timestamp | None = None

    @property
    def until(self) -> Timestamp:
        """When the selection is fully reflected at the instance (its work done)."""
        return self.at if self.done is None else max(self.at, self.done)


@dataclass(frozen=True, slots=True)
class Ledger:
    """The selections per CSCI-ID not yet reflected in a report (values, never mutated)."""

    pending: Mapping[CsciId, tuple[Dispatch, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def record(self, csci_id: CsciId, dispatch: Dispatch) -> Ledger:
        """The ledger with one more selection of ``csci_id``."""
        pending = dict(self.pending)
        pending[csci_id] = (*pending.get(csci_id, ()), dispatch)
        return Ledger(MappingProxyType(pending))

    def since(self, csci_id: CsciId, collected_at: Timestamp) -> tuple[Dispatch, ...]:
        """The selections of ``csci_id`` that reached it after a report collected then (their
        work is not in that report's load)."""
        return tuple(d for d in self.pending.get(csci_id, ()) if d.at > collected_at)

    def holding(self, csci_id: CsciId, collected_at: Timestamp) -> tuple[Dispatch, ...]:
        """The selections of ``csci_id`` whose elements a state view collected then may not
        hold yet (their work was not done)."""
        return tuple(d for d in self.pending.get(csci_id, ()) if d.until > collected_at)

    def pruned(self, csci_id: CsciId, collected_at: Timestamp) -> Ledger:
        """The ledger without the selections reports collected then fully reflect."""
        kept = self.holding(csci_id, collected_at)
        if len(kept) == len(self.pending.get(csci_id, ())):
            return self
        pending = dict(self.pending)
        if kept:
            pending[csci_id] = kept
        else:
            pending.pop(csci_id, None)
        return Ledger(MappingProxyType(pending))


def work_of(dispatch: Dispatch, settings: DispatchAccounting) -> float:
    """Seconds of work of one selection: its own estimate, else the configured default."""
    if dispatch.work is not None:
        return dispatch.work
    per = settings.computing_time_per_selection
    return 0.0 if per is None else per / 1e6


def backlog(
    reported: float,
    collected_at: Timestamp,
    dispatches: Sequence[Dispatch],
    now: Timestamp,
    settings: DispatchAccounting,
) -> float:
    """The waiting work (s) at ``now``: the reported work, drained at one second per second
    since it was collected, plus each selection's work from when it arrives (a virtual
    queue). Selections still on their way count in full."""
    queue = reported
    last = collected_at
    for dispatch in sorted(dispatches, key=lambda d: d.at):
        at = max(last, min(dispatch.at, now))
        queue = max(0.0, queue - (at - last)) + work_of(dispatch, settings)
        last = at
    return max(0.0, queue - max(0.0, now - last))


def pending_keys(dispatches: Sequence[Dispatch]) -> frozenset[Key]:
    """Every working-set element the selections leave behind."""
    if len(dispatches) == 1:
        return dispatches[0].keys
    keys: set[Key] = set()
    for dispatch in dispatches:
        keys.update(dispatch.keys)
    return frozenset(keys)


def accounted_gas(gas: int, dispatches: Sequence[Dispatch], settings: DispatchAccounting) -> int:
    """GAS less the slots the selections not yet reported take."""
    return max(0, gas - settings.gas_per_selection * len(dispatches))
