"""Decision points DP1-DP10, triggers T1-T10 and the per-session decision-rate bound (8.2, 8.3, 13).

Between decision points the mapping does not act, so a stream of metric updates does not
become a stream of decisions (M29); the rate of decisions per session is bounded (13).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from controller.selection.mapping.context import Commitment
from controller.selection.mapping.vocabulary import DecisionPoint, Trigger
from controller.selection.units import Timestamp

DP = DecisionPoint

DECISION_POINT: Mapping[Trigger, DecisionPoint] = MappingProxyType(
    {
        Trigger.T1: DP.DP3,
        Trigger.T2: DP.DP2,
        Trigger.T3: DP.DP4,
        Trigger.T4: DP.DP5,
        Trigger.T5: DP.DP6,
        Trigger.T6: DP.DP7,
        Trigger.T7: DP.DP7,
        Trigger.T8: DP.DP8,
        Trigger.T9: DP.DP9,
        Trigger.T10: DP.DP10,
    }
)
"""The decision point a trigger raises; T7 (instance degradation) has no point of its own in
8.2 and raises DP7, a change of the view that puts the selection at risk (Section 3)."""

PHASES: Mapping[DecisionPoint, tuple[str, ...]] = MappingProxyType(
    {
        DP.DP1: ("P0",),
        DP.DP2: ("P2", "P3", "P4", "P5", "P6", "P7", "P8"),
        DP.DP3: ("P2", "P3", "P4", "P5", "P6", "P7", "P8"),
        DP.DP4: ("P4", "P5"),
        DP.DP5: ("P5",),
        DP.DP6: ("P7", "P8"),
        DP.DP7: ("P4", "P9"),
        DP.DP8: ("P10",),
        DP.DP9: ("P11",),
        DP.DP10: ("P11",),
    }
)
"""The phases each decision point runs (8.2)."""

WINDOW = 60.0
"""max-decision-rate counts decisions per session per minute."""

URGENT = frozenset({Trigger.T6, Trigger.T8, Trigger.T10})
"""Triggers the rate bound never suppresses: a constraint at risk, a tail event, the close."""


def decision_point(trigger: Trigger | None) -> DecisionPoint:
    """The decision point of ``trigger``; no trigger is session admission (DP1)."""
    return DP.DP1 if trigger is None else DECISION_POINT[trigger]


def needs_decision(
    trigger: Trigger, commitment: Commitment | None, step_id: int | None, now: Timestamp
) -> bool:
    """T1 re-evaluates unless the commitment covers the step; every other trigger decides."""
    if trigger is Trigger.T1 and commitment is not None:
        return not commitment.covers(step_id, now)
    return True


@dataclass(frozen=True, slots=True)
class DecisionRate:
    """The decisions a session took in the last minute (rate-limits/max-decision-rate)."""

    times: tuple[Timestamp, ...] = ()

    def admit(
        self, now: Timestamp, limit: int | None, trigger: Trigger | None
    ) -> tuple[bool, DecisionRate]:
        """Whether a decision may run now, and the rate after it; urgent triggers always run.

        A refused decision is not counted; the commitment in force stays.
        """
        recent = tuple(t for t in self.times if now - t < WINDOW)
        if limit is not None and len(recent) >= limit and trigger not in URGENT:
            return False, DecisionRate(recent)
        return True, DecisionRate((*recent, now))
