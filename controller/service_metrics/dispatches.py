"""Dispatch accounting of select-service (update-control/dispatch-accounting; service-metrics-op
8): the selections the C-PS made since each CST entry's last report, counted into the entry
for the next selection (:mod:`controller.selection.dispatch`).

A select-service selection's request reaches the CSCI-ID after the selected path's network
delay; it is pending until a report collected after that arrives. Its work is the configured
``computing-time-per-selection`` (a select-service request says nothing of its size). Steering
entries installed at the forwarders are not selections of one request and are not counted.
"""

from __future__ import annotations

from controller.selection.dispatch import Dispatch, DispatchAccounting, Ledger
from controller.selection.joint import ComputingServiceTable, Outcome, ResultKind
from controller.selection.joint.accounted import accounted_entry
from controller.selection.units import Timestamp
from controller.types import CsId


class Dispatches:
    """The ledger of select-service selections; the caller holds the service's lock."""

    def __init__(self) -> None:
        self.ledger = Ledger()

    def table(
        self,
        cst: ComputingServiceTable,
        cs_id: CsId,
        now: Timestamp,
        settings: DispatchAccounting,
    ) -> ComputingServiceTable | None:
        """The entries of ``cs_id`` with the selections not yet reported counted in; None
        when accounting is off or nothing is pending (the CST is then used as it is)."""
        if not settings.enabled:
            return None
        entries = cst.service(cs_id)
        counted = ComputingServiceTable()
        changed = False
        for csci_id, entry in entries.items():
            self.ledger = self.ledger.pruned(csci_id, entry.last_updated)
            pending = self.ledger.since(csci_id, entry.last_updated)
            changed = changed or bool(pending)
            counted.put(accounted_entry(entry, pending, now, settings))
        return counted if changed else None

    def selected(self, outcome: Outcome, now: Timestamp, settings: DispatchAccounting) -> None:
        """Record a selection that produced a CSCI-ID (not a dry run)."""
        if not settings.enabled or outcome.result is not ResultKind.SELECTED:
            return
        if outcome.csci_id is None:
            return
        delay = (outcome.network_delay or 0) / 1e6
        self.ledger = self.ledger.record(outcome.csci_id, Dispatch(now + delay))
