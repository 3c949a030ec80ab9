"""Fallback procedures (service-metrics-op 6.2.5).

Level 1 relaxes the constraints one step at a time, cumulatively, in the configured order, and
re-runs the algorithm after each step. Level 2 steers on network metrics alone when no
computing metrics are usable; Level 3 uses the default route when no network path is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from decimal import ROUND_DOWN, ROUND_UP, Decimal
from typing import Any

from controller.selection.joint.outcome import RelaxationRecord
from controller.selection.joint.requirement import (
    HardConstraints,
    RelaxationAmount,
    SelectionSettings,
)
from controller.selection.joint.tables import NetworkServiceTable, NstEntry
from controller.selection.joint.vocabulary import RelaxationStep
from controller.selection.units import Timestamp
from controller.types import ForwarderId

Step = RelaxationStep
DEFAULT_PERCENT = Decimal(20)
DEFAULT_POINTS = 1
_HUNDRED = 100
_MILLI = Decimal("0.001")
_TIMES = frozenset({RelaxationStep.RELAX_JITTER, RelaxationStep.RELAX_LATENCY})
_PPM_MAX = 1_000_000

# step -> (field of HardConstraints, +1 to increase a maximum / -1 to decrease a minimum,
#          whether the amount is a percentage, the floor of a decreased minimum)
_STEPS: dict[Step, tuple[str, int, bool, int]] = {
    Step.RELAX_PRICE: ("max_price", 1, True, 0),
    Step.RELAX_SECURITY_LEVEL: ("min_security_level", -1, False, 0),
    Step.RELAX_REPUTATION: ("min_reputation", -1, False, 0),
    Step.RELAX_GAS: ("required_gas", -1, False, 1),
    Step.RELAX_BANDWIDTH: ("min_bandwidth", -1, True, 0),
    Step.RELAX_JITTER: ("max_jitter", 1, True, 0),
    Step.RELAX_LOSS_RATE: ("max_loss_rate", 1, True, 0),
    Step.RELAX_LATENCY: ("max_latency", 1, True, 0),
}


def _relaxed(
    value: int | Decimal, direction: int, amount: Decimal, *, percent: bool, floor: int
) -> int | Decimal:
    """The loosened threshold: exact to three fraction digits (decimal64 in the YANG)."""
    if percent:
        scaled = Decimal(value) * (_HUNDRED + direction * amount) / _HUNDRED
        new: int | Decimal = scaled.quantize(_MILLI, ROUND_DOWN if direction > 0 else ROUND_UP)
    else:
        new = value + direction * int(amount)
    return max(floor, new)


def relax(
    hard: HardConstraints, spec: RelaxationAmount, *, position: int, round_: int
) -> tuple[HardConstraints, RelaxationRecord] | None:
    """Apply one Level 1 step; None when its constraint is not in force or does not move."""
    if spec.step is Step.ACCEPT_DEGRADED:
        if hard.accept_degraded:
            return None
        record = RelaxationRecord(position, spec.step, round_)
        return dataclasses.replace(hard, accept_degraded=True), record
    name, direction, percent, floor = _STEPS[spec.step]
    value: int | Decimal | None = getattr(hard, name)
    if value is None:
        return None
    default = DEFAULT_PERCENT if percent else Decimal(DEFAULT_POINTS)
    new = _relaxed(value, direction, spec.amount or default, percent=percent, floor=floor)
    if spec.step is Step.RELAX_LOSS_RATE:
        new = min(new, _PPM_MAX)
    if spec.step in _TIMES:
        new = int(new)  # whole microseconds, rounded towards the looser side by ROUND_DOWN
    if new == value:
        return None
    record = RelaxationRecord(position, spec.step, round_, value, new)
    changes: dict[str, Any] = {name: new}
    return dataclasses.replace(hard, **changes), record


def relaxation_plan(settings: SelectionSettings) -> Iterable[tuple[int, RelaxationAmount]]:
    """The steps of Level 1 with their round, in application order."""
    policy = settings.fallback
    for round_ in range(1, policy.max_rounds + 1):
        for spec in policy.relaxation:
            yield round_, spec


def usable_path(
    nst: NetworkServiceTable,
    ingress: ForwarderId,
    egress: ForwarderId,
    now: Timestamp,
    settings: SelectionSettings,
) -> NstEntry | None:
    """NST[Ingress, Egress] if it exists and has not outlived the network entry lifetime."""
    path = nst.get(ingress, egress)
    lifetime = settings.network_entry_lifetime
    if path is None or (lifetime is not None and now - path.last_updated > lifetime):
        return None
    return path


def network_only(
    nst: NetworkServiceTable,
    ingress: ForwarderId,
    egresses: Iterable[ForwarderId],
    now: Timestamp,
    settings: SelectionSettings,
) -> NstEntry | None:
    """Level 2: the egress with the minimum Network Delay (ties by identifier), if any."""
    paths = (usable_path(nst, ingress, egress, now, settings) for egress in set(egresses))
    usable = [path for path in paths if path is not None]
    return min(usable, key=lambda p: (p.network_delay, p.egress), default=None)
