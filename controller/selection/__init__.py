"""Pure decision logic of the classic CATS Path Selector (draft-zhangb-cats-service-metrics-op
6.2): the CST and NST, the Joint Selection Algorithm, its extensions and fallback levels.

``explain`` evaluates every candidate and is what the select-service RPC returns (its reply
lists every CST entry of the CS-ID); ``select`` reaches the same winner through the TST index
for steering re-evaluation at high rates. No I/O, no clock: time is passed in.
"""

from controller.selection.fast import select
from controller.selection.index import SelectionIndex
from controller.selection.joint import explain
from controller.selection.outcome import CandidateReport, Outcome, RelaxationRecord, UnusableValue
from controller.selection.requirement import (
    Bounds,
    FallbackPolicy,
    GeoFence,
    HardConstraints,
    LoadDistribution,
    PolicyOverride,
    ProviderPreference,
    RelaxationAmount,
    Requirement,
    SelectionRequest,
    SelectionSettings,
    SoftConstraint,
    Weights,
)
from controller.selection.tables import (
    ComputingServiceTable,
    CstEntry,
    NetworkServiceTable,
    NstEntry,
    PathAttributes,
)
from controller.selection.units import Micros, from_ms, from_us, to_ms
from controller.selection.vocabulary import (
    CsciId,
    CsId,
    DecidedBy,
    ExclusionReason,
    FallbackLevel,
    ForwarderId,
    Health,
    LoadMethod,
    Metric,
    Objective,
    OverrideMode,
    RelaxationStep,
    ResultKind,
    TieBreak,
    ValueCondition,
)

__all__ = [
    "Bounds",
    "CandidateReport",
    "ComputingServiceTable",
    "CsId",
    "CsciId",
    "CstEntry",
    "DecidedBy",
    "ExclusionReason",
    "FallbackLevel",
    "FallbackPolicy",
    "ForwarderId",
    "GeoFence",
    "HardConstraints",
    "Health",
    "LoadDistribution",
    "LoadMethod",
    "Metric",
    "Micros",
    "NetworkServiceTable",
    "NstEntry",
    "Objective",
    "Outcome",
    "OverrideMode",
    "PathAttributes",
    "PolicyOverride",
    "ProviderPreference",
    "RelaxationAmount",
    "RelaxationRecord",
    "RelaxationStep",
    "Requirement",
    "ResultKind",
    "SelectionIndex",
    "SelectionRequest",
    "SelectionSettings",
    "SoftConstraint",
    "TieBreak",
    "UnusableValue",
    "ValueCondition",
    "Weights",
    "explain",
    "from_ms",
    "from_us",
    "select",
    "to_ms",
]
