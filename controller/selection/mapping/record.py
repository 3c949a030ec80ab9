"""The decision artifacts of one application of the procedure (6.5, MSG-9; M8, M18, M39).

:class:`Evaluation` is what :func:`evaluate` returns: the selection result of MSG-9 and
everything the decision used. :class:`DecisionRecord` adds what the C-PS assigns when it
records it: the record id, the commitment and handoff ids, the invalidation it answers.
Constraints (exclusions) and preferences (valuations, qualified values used in preferences)
stay apart (M18).
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.selection.mapping.combination import Scored
from controller.selection.mapping.context import CombinationRule
from controller.selection.mapping.descriptor import Descriptor
from controller.selection.mapping.findings import Exclusion, QualifiedValue
from controller.selection.mapping.stability import ChangeAssessment, StabilityCheck
from controller.selection.mapping.tail import FailureReport
from controller.selection.mapping.view import Candidate
from controller.selection.mapping.vocabulary import (
    DecisionPoint,
    DegradationClass,
    Element,
    FallbackRung,
    InvalidationCondition,
    Outcome,
    Trigger,
)
from controller.selection.units import Timestamp
from controller.types import CommitmentId, CsciId, SessionId


@dataclass(frozen=True, slots=True)
class CandidateResult:
    """One candidate as the decision saw it: its resource-view snapshot, and either its
    exclusions (P4) or its valuation and suitability (P5, P6) with its rank (1 is best)."""

    candidate: Candidate
    exclusions: tuple[Exclusion, ...] = ()
    scored: Scored | None = None
    rank: int | None = None

    @property
    def csci_id(self) -> CsciId:
        """The candidate."""
        return self.candidate.csci_id

    @property
    def eligible(self) -> bool:
        """Whether the candidate satisfied every constraint."""
        return not self.exclusions


@dataclass(frozen=True, slots=True)
class Evaluation:
    """MSG-9 and its inputs: the outcome of P4-P7 (or of the fallback ladder) for one step.

    ``results`` are in the order the candidates were given. ``descriptor`` is the descriptor
    the selection was made on (the degraded one when rung 2 applied). ``failure`` is set, and
    ``outcome`` is None, when the step (or with ``session_failed`` the session) failed.
    """

    session_id: SessionId
    turn_id: int | None
    step_id: int | None
    decision_point: DecisionPoint
    trigger: Trigger | None
    created_at: Timestamp
    descriptor: Descriptor
    combination: CombinationRule
    results: tuple[CandidateResult, ...]
    outcome: Outcome | None = None
    selected: CsciId | None = None
    suitability: float | None = None
    change: ChangeAssessment | None = None
    stability: StabilityCheck | None = None
    fallback_rung: FallbackRung | None = None
    degradation_applied: tuple[DegradationClass, ...] = ()
    failure: FailureReport | None = None
    session_failed: bool = False
    qualified: tuple[QualifiedValue, ...] = ()

    @property
    def eligible(self) -> tuple[CsciId, ...]:
        """The eligible set, in the order of the candidates."""
        return tuple(r.csci_id for r in self.results if r.eligible)

    @property
    def exclusions(self) -> tuple[Exclusion, ...]:
        """Every exclusion with its reason code (MSG-9 'excluded')."""
        return tuple(e for r in self.results for e in r.exclusions)

    def result(self, csci_id: str) -> CandidateResult:
        """The result of one candidate (KeyError if it was not given)."""
        for result in self.results:
            if result.csci_id == csci_id:
                return result
        raise KeyError(csci_id)

    def record(
        self,
        record_id: int,
        *,
        commitment_id: CommitmentId | None = None,
        handoff_id: str | None = None,
        invalidation: Invalidation | None = None,
    ) -> DecisionRecord:
        """The decision record of this evaluation (6.5)."""
        return DecisionRecord(record_id, self, commitment_id, handoff_id, invalidation)


@dataclass(frozen=True, slots=True)
class Invalidation:
    """The MSG-14 notice a decision answers; a notice not acted on is still recorded."""

    condition: InvalidationCondition
    acted_on: bool
    element: Element | None = None


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """A decision record (6.5): it lives for the session and serves audit, accounting and the
    later decisions of the session (M39). Everything of the evaluation is kept."""

    record_id: int
    evaluation: Evaluation
    commitment_id: CommitmentId | None = None
    handoff_id: str | None = None
    invalidation: Invalidation | None = None

    @property
    def created_at(self) -> Timestamp:
        """When the decision was taken."""
        return self.evaluation.created_at

    @property
    def outcome(self) -> Outcome | None:
        """keep, hold-and-watch or move; None for a failure."""
        return self.evaluation.outcome

    @property
    def selected(self) -> CsciId | None:
        """The selected candidate."""
        return self.evaluation.selected
