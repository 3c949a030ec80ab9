"""A CST entry as reported plus the C-PS's own selections since (update-control/
dispatch-accounting, :mod:`controller.selection.dispatch`; service-metrics-op 6.2.1, 8).

GAS loses ``gas-per-selection`` slots per selection not yet reported, and the Computing Time
grows by the work those selections still queue at the instance (a virtual queue drained at
one second per second). A changed Computing Time is an estimate and is marked so, which the
decision records and select-service candidates report (``estimated-metric``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from controller.selection.dispatch import Dispatch, DispatchAccounting, accounted_gas, backlog
from controller.selection.joint.tables import CstEntry
from controller.selection.joint.vocabulary import Metric
from controller.selection.units import Micros, Timestamp


def accounted_entry(
    entry: CstEntry,
    dispatches: Sequence[Dispatch],
    now: Timestamp,
    settings: DispatchAccounting,
) -> CstEntry:
    """``entry`` with the selections not yet reported counted in (unchanged when disabled
    or when there are none)."""
    if not settings.enabled or not dispatches:
        return entry
    queued = backlog(0.0, entry.last_updated, dispatches, now, settings)
    estimated = entry.estimated
    if queued > 0 and Metric.COMPUTING_TIME not in estimated:
        estimated = (*estimated, Metric.COMPUTING_TIME)
    return replace(
        entry,
        gas=accounted_gas(entry.gas, dispatches, settings),
        computing_time=Micros(entry.computing_time + round(queued * 1e6)),
        estimated=estimated,
    )
