"""Pure decision logic of the classic CATS Path Selector (draft-zhangb-cats-service-metrics-op
6.2): the CST and NST, the Joint Selection Algorithm, its extensions and fallback levels.

``explain`` evaluates every candidate and is what the select-service RPC returns (its reply
lists every CST entry of the CS-ID); ``select`` reaches the same winner through the TST index
for steering re-evaluation at high rates. No I/O, no clock: time is passed in.
"""

from controller.selection.joint.algorithm import explain
from controller.selection.joint.fast import select
from controller.selection.joint.index import SelectionIndex
from controller.selection.joint.outcome import (
    CandidateReport,
    Outcome,
    RelaxationRecord,
    UnusableValue,
)
from controller.selection.joint.requirement import (
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
from controller.selection.joint.tables import (
    ComputingServiceTable,
    CstEntry,
    NetworkServiceTable,
    NstEntry,
    PathAttributes,
)
from controller.selection.joint.vocabulary import (
    DecidedBy,
    ExclusionReason,
    FallbackLevel,
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
from controller.selection.units import Micros, from_ms, from_us, to_ms

__all__ = [
    "Bounds",
    "CandidateReport",
    "ComputingServiceTable",
    "CstEntry",
    "DecidedBy",
    "ExclusionReason",
    "FallbackLevel",
    "FallbackPolicy",
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
