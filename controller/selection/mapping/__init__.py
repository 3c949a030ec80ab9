"""Pure decision logic of agent selection (draft-mo-cats-agent-selection-mapping-00, 6-11).

Layer 1 (:mod:`descriptor`), layer 2 (:mod:`view`) and layer 3 (:mod:`context`) are frozen
values; :func:`evaluate` runs P4-P7 for one step over N candidates (MSG-8 -> MSG-9);
:mod:`tail` is P10 and the fallback ladder, :mod:`accounting` is P11, :mod:`points` the
decision points, triggers and rate bound, :mod:`trust` the source discounting of Section 14.
No I/O, no clock: time is passed in, in seconds.
"""

from controller.selection.mapping.accounting import (
    BudgetLine,
    Consumption,
    Pace,
    SessionAccount,
    allowance,
    budget_decision,
    charge,
    charge_change,
    crossed,
    reserve,
)
from controller.selection.mapping.combination import Scored
from controller.selection.mapping.context import (
    Band,
    BudgetPacing,
    Commitment,
    Lexicographic,
    Occasion,
    Policy,
    SelectionContext,
    SessionPosition,
    Stability,
    TierCatalogue,
    Weighted,
)
from controller.selection.mapping.descriptor import (
    Budget,
    Descriptor,
    Endpoint,
    Locality,
    Objective,
    RequiredModel,
    WorkingSetElement,
)
from controller.selection.mapping.evaluate import EvaluationRequest, evaluate
from controller.selection.mapping.findings import Effect, Exclusion, QualifiedValue
from controller.selection.mapping.points import DecisionRate, decision_point, needs_decision
from controller.selection.mapping.record import (
    CandidateResult,
    DecisionRecord,
    Evaluation,
    Invalidation,
)
from controller.selection.mapping.relations import (
    budget_ok,
    recompute_time,
    state_cost,
    state_fits,
    tail_ok,
    transfer_time,
)
from controller.selection.mapping.stability import ChangeAssessment, Judgement, StabilityCheck
from controller.selection.mapping.tail import (
    Alternative,
    FailureReport,
    StepProgress,
    TailDecision,
    degrade,
    is_tail_event,
    on_tail_event,
)
from controller.selection.mapping.trust import SourceAccuracy, SourcePolicy
from controller.selection.mapping.valuation import Valuation
from controller.selection.mapping.values import Distribution, Metadata, Quantity, Reading, Unit
from controller.selection.mapping.view import (
    INVENTORY,
    Accelerator,
    Artifact,
    Candidate,
    Capability,
    EndpointCost,
    PathView,
    ResourceView,
    StateElementView,
    TokenRate,
    TransferWindow,
)

__all__ = [
    "INVENTORY",
    "Accelerator",
    "Alternative",
    "Artifact",
    "Band",
    "Budget",
    "BudgetLine",
    "BudgetPacing",
    "Candidate",
    "CandidateResult",
    "Capability",
    "ChangeAssessment",
    "Commitment",
    "Consumption",
    "DecisionRate",
    "DecisionRecord",
    "Descriptor",
    "Distribution",
    "Effect",
    "Endpoint",
    "EndpointCost",
    "Evaluation",
    "EvaluationRequest",
    "Exclusion",
    "FailureReport",
    "Invalidation",
    "Judgement",
    "Lexicographic",
    "Locality",
    "Metadata",
    "Objective",
    "Occasion",
    "Pace",
    "PathView",
    "Policy",
    "QualifiedValue",
    "Quantity",
    "Reading",
    "RequiredModel",
    "ResourceView",
    "Scored",
    "SelectionContext",
    "SessionAccount",
    "SessionPosition",
    "SourceAccuracy",
    "SourcePolicy",
    "Stability",
    "StabilityCheck",
    "StateElementView",
    "StepProgress",
    "TailDecision",
    "TierCatalogue",
    "TokenRate",
    "TransferWindow",
    "Unit",
    "Valuation",
    "Weighted",
    "WorkingSetElement",
    "allowance",
    "budget_decision",
    "budget_ok",
    "charge",
    "charge_change",
    "crossed",
    "decision_point",
    "degrade",
    "evaluate",
    "is_tail_event",
    "needs_decision",
    "on_tail_event",
    "recompute_time",
    "reserve",
    "state_cost",
    "state_fits",
    "tail_ok",
    "transfer_time",
]
