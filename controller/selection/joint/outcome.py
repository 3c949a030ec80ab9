"""What a selection returns: candidates with TST and score or reason, and the fallback level.

Mirrors the ``selection-outcome`` and ``candidate`` groupings of ietf-cats-service-metrics
(service-metrics-op 6.2.3 Step 7, 6.2.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from controller.selection.joint.tables import CstEntry, NstEntry
from controller.selection.joint.vocabulary import (
    DecidedBy,
    ExclusionReason,
    FallbackLevel,
    Metric,
    Objective,
    RelaxationStep,
    ResultKind,
    TieBreak,
    ValueCondition,
)
from controller.selection.units import Micros
from controller.types import CsciId, ForwarderId


@dataclass(frozen=True, slots=True)
class UnusableValue:
    """A value of a candidate that could not be used (unknown or stale)."""

    metric: Metric
    condition: ValueCondition


@dataclass(frozen=True, slots=True)
class CandidateReport:
    """One candidate: feasible with a score (and rank), or excluded with a reason, never both.

    ``entry`` and ``path`` are the CST and NST values at decision time; ``tst`` is
    Computing_Time + Network_Delay when a path was found (Step 4). ``score`` of a feasible
    candidate is None only in a fast :func:`select` result whose normalization bounds would
    come from the whole Candidate_Set, which the fast path does not scan.
    """

    entry: CstEntry
    path: NstEntry | None = None
    tst: Micros | None = None
    score: float | None = None
    rank: int | None = None
    violated_soft: tuple[Metric, ...] = ()
    reason: ExclusionReason | None = None
    detail: str = ""
    unusable: tuple[UnusableValue, ...] = ()

    @property
    def csci_id(self) -> CsciId:
        """The CSCI-ID of the candidate."""
        return self.entry.csci_id

    @property
    def feasible(self) -> bool:
        """Whether the candidate passed every filter."""
        return self.reason is None


@dataclass(frozen=True, slots=True)
class RelaxationRecord:
    """One Fallback Level 1 relaxation applied (6.2.5), in the unit of its constraint."""

    position: int
    step: RelaxationStep
    round: int
    before: int | Decimal | None = None
    after: int | Decimal | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """The outcome of one run of the Joint Selection Algorithm and its fallback procedures.

    ``complete`` is True when ``candidates`` holds every CST entry of the CS-ID (explain);
    False when it holds only the candidates the fast path examined (select). ``estimated``:
    the values of the selected CST entry that are estimates (its ``estimated``).
    """

    result: ResultKind
    fallback_level: FallbackLevel
    candidates: tuple[CandidateReport, ...]
    complete: bool
    csci_id: CsciId | None = None
    egress: ForwarderId | None = None
    computing_time: Micros | None = None
    network_delay: Micros | None = None
    tst: Micros | None = None
    decided_by: DecidedBy | None = None
    deciding_objective: Objective | None = None
    deciding_tie_break: TieBreak | None = None
    hierarchical_egress: ForwarderId | None = None
    normalization_from_candidates: bool = False
    relaxations: tuple[RelaxationRecord, ...] = ()
    estimated: tuple[Metric, ...] = ()

    def candidate(self, csci_id: str) -> CandidateReport:
        """The report of one candidate (KeyError if it is not listed)."""
        for report in self.candidates:
            if report.csci_id == csci_id:
                return report
        raise KeyError(csci_id)
