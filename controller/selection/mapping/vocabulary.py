"""Identifiers and the identity names of ietf-cats-agent-selection (agent draft Sections 6-8).

The enum values are the identity (or enumeration) names of ietf-cats-agent-selection and
ietf-cats-types, so a decision renders to YANG by prefixing the module name, as
``controller.selection.joint.vocabulary`` does for the service metrics.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """role: a descriptor element is a constraint or a preference (6.6, 7.5, M18)."""

    CONSTRAINT = "constraint"
    PREFERENCE = "preference"


class Scope(StrEnum):
    """scope: session, turn or step; unscoped means step (7.5, 9.3)."""

    SESSION = "session"
    TURN = "turn"
    STEP = "step"


class Confidence(StrEnum):
    """cats-t:confidence (7.4)."""

    ASSERTED = "asserted"
    DERIVED = "derived"
    ESTIMATED = "estimated"


class Presence(StrEnum):
    """cats-t:presence: MSG-6 reports unknown, never absent, for a key it cannot answer."""

    PRESENT = "present"
    ABSENT = "absent"
    UNKNOWN = "unknown"


class ValueCondition(StrEnum):
    """qualified-value condition: why a value may not satisfy a constraint (7.5, M20, M34)."""

    UNKNOWN = "unknown"
    STALE = "stale"
    UNATTRIBUTED = "unattributed"
    MEAN_FOR_TAIL = "mean-for-tail"
    ESTIMATED = "estimated"


class Element(StrEnum):
    """Information elements of Section 7 (descriptor, resource view, decision quantities)."""

    SERVICE_ID = "service-id"
    CAPABILITY_TIER = "capability-tier"
    REQUIRED_PRECISION = "required-precision"
    CONTEXT_LENGTH = "context-length"
    WORKING_SET = "working-set"
    LOCALITY = "locality"
    TENANT = "tenant"
    BUDGET = "budget"
    OBJECTIVE = "objective"
    DEGRADATION = "degradation"
    FRESHNESS_NEED = "freshness-need"
    MODE = "mode"
    ENDPOINT = "endpoint"
    PATH_SET = "path-set"
    DETERMINISM = "determinism"
    TIER_OFFERED = "tier-offered"
    QUEUE_DELAY = "queue-delay"
    MEMORY_HEADROOM = "memory-headroom"
    STEP_LATENCY = "step-latency"
    PRESENCE = "presence"
    RETRIEVAL_COST = "retrieval-cost"
    RECOMPUTE_COST = "recompute-cost"
    ENDPOINT_COST = "endpoint-cost"
    TRANSFER_WINDOW = "transfer-window"
    SUITABILITY = "suitability"
    STATE_BYTES = "state-bytes"
    TRANSFER_TIME = "transfer-time"
    RECOMPUTE_TIME = "recompute-time"
    STATE_COST = "state-cost"
    CHANGE_COST = "change-cost"
    CONSUMED = "consumed"
    REMAINING = "remaining"
    RESERVE = "reserve"


class ElementClass(StrEnum):
    """working-set-class (6.3, M22)."""

    MODEL_CONTEXT_STATE = "model-context-state"
    RETRIEVED_MATERIAL = "retrieved-material"
    TOOL_RESULT = "tool-result"
    PLAN_SCRATCH_STATE = "plan-scratch-state"
    LONG_TERM_MEMORY = "long-term-memory"


ACCELERATOR_CLASSES = frozenset({ElementClass.MODEL_CONTEXT_STATE})
"""Classes that must sit in accelerator memory beside the weights (6.6 Table 2, 6.7)."""
NOT_RECOMPUTABLE = frozenset({ElementClass.TOOL_RESULT})
"""Classes whose re-obtaining may be impossible: the tool is not idempotent (6.3)."""


class ResidencyTier(StrEnum):
    """residency-tier (3, 7.2)."""

    ACCELERATOR_MEMORY = "accelerator-memory"
    HOST_MEMORY = "host-memory"
    LOCAL_STORAGE = "local-storage"
    REMOTE_STORE = "remote-store"


class Precision(StrEnum):
    """precision, highest first (7.1 required-precision)."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


class DegradationClass(StrEnum):
    """degradation-class: reductions a step tolerates (6.2, 8.4 rung 2)."""

    LOWER_PRECISION = "lower-precision"
    LOWER_CAPABILITY_TIER = "lower-capability-tier"
    TRUNCATED_WORKING_SET = "truncated-working-set"
    ADDITIONAL_DELAY = "additional-delay"


class BudgetDimension(StrEnum):
    """budget-dimension (M15); time is in seconds here, milliseconds in YANG."""

    TIME = "time"
    TOKENS = "tokens"
    COST = "cost"
    ENERGY = "energy"


class BudgetKind(StrEnum):
    """budget kind: a ceiling is a constraint, a target a preference (6.2, M15)."""

    CEILING = "ceiling"
    TARGET = "target"


class ObjectiveQuantity(StrEnum):
    """objective-quantity (7.1 objective)."""

    STEP_COMPLETION_TIME = "step-completion-time"
    TURN_COMPLETION_TIME = "turn-completion-time"
    TIME_TO_FIRST_TOKEN = "time-to-first-token"
    INTER_TOKEN_INTERVAL = "inter-token-interval"
    SESSION_COMPLETION_TIME = "session-completion-time"


class CommunicationMode(StrEnum):
    """communication-mode (7.1 mode)."""

    REQUEST_RESPONSE = "request-response"
    STREAMING = "streaming"
    TOOL_CALL = "tool-call"
    FAN_OUT = "fan-out"


class EndpointKind(StrEnum):
    """endpoint-kind (7.1 endpoint)."""

    TOOL = "tool"
    DATA_SOURCE = "data-source"
    MEMORY_STORE = "memory-store"
    STATE_STORE = "state-store"
    ARTIFACT_REGISTRY = "artifact-registry"


class DeterminismClass(StrEnum):
    """determinism-class, weakest first (7.2 determinism)."""

    BEST_EFFORT = "best-effort"
    BOUNDED_LATENCY = "bounded-latency"
    BOUNDED_LATENCY_AND_JITTER = "bounded-latency-and-jitter"


DETERMINISM_RANK = {cls: rank for rank, cls in enumerate(DeterminismClass)}


class Dimension(StrEnum):
    """valuation-dimension (6.3): transfer (forwarding), computing, storage."""

    FORWARDING = "forwarding"
    COMPUTING = "computing"
    STORAGE = "storage"


UNTRUSTED_DIMENSIONS = (Dimension.COMPUTING, Dimension.STORAGE)
"""Dimensions an instance's own C-SMA supplies: the ones an untrusted party asserts (14)."""


class DecisionPoint(StrEnum):
    """decision-point DP1-DP10 (8.2)."""

    DP1 = "dp1-session-admission"
    DP2 = "dp2-turn-start"
    DP3 = "dp3-step-boundary"
    DP4 = "dp4-wake-up"
    DP5 = "dp5-freshness-expiry"
    DP6 = "dp6-sustained-improvement"
    DP7 = "dp7-constraint-at-risk"
    DP8 = "dp8-tail-event"
    DP9 = "dp9-budget-threshold"
    DP10 = "dp10-session-close"


class Trigger(StrEnum):
    """trigger T1-T10 (8.3)."""

    T1 = "t1-step-boundary"
    T2 = "t2-turn-start"
    T3 = "t3-wake-up"
    T4 = "t4-freshness-expiry"
    T5 = "t5-sustained-improvement"
    T6 = "t6-constraint-at-risk"
    T7 = "t7-instance-degradation"
    T8 = "t8-tail-event"
    T9 = "t9-budget-threshold"
    T10 = "t10-session-close"


class Outcome(StrEnum):
    """outcome of P7 (8.1)."""

    KEEP = "keep"
    HOLD_AND_WATCH = "hold-and-watch"
    MOVE = "move"


class FallbackRung(StrEnum):
    """fallback-rung, in the order of the ladder (8.4)."""

    RE_BAND_DESCRIPTOR = "re-band-descriptor"
    DEGRADE_WITHIN_CLASS = "degrade-within-class"
    MOVE_WORK = "move-work"
    FAIL_STEP = "fail-step"
    FAIL_SESSION = "fail-session"


LADDER = tuple(FallbackRung)
"""The five rungs of 8.4 in their order."""


class Reason(StrEnum):
    """Reason codes: identities derived from cats-t:exclusion-reason (P4, 6.7, 6.8, M50)."""

    VALUE_UNKNOWN = "value-unknown"
    VALUE_STALE = "value-stale"
    VALUE_UNATTRIBUTED = "value-unattributed"
    VALUE_MEAN_FOR_TAIL = "value-mean-for-tail"
    CAPABILITY_TIER_BELOW_REQUIRED = "capability-tier-below-required"
    PRECISION_NOT_SUPPORTED = "precision-not-supported"
    CONTEXT_WINDOW_TOO_SMALL = "context-window-too-small"
    MEMORY_DOES_NOT_FIT = "memory-does-not-fit"
    MODEL_VERSION_NOT_OFFERED = "model-version-not-offered"
    LOCALITY_NOT_PERMITTED = "locality-not-permitted"
    PATH_REGION_NOT_PERMITTED = "path-region-not-permitted"
    ELEMENT_MAY_NOT_MOVE = "element-may-not-move"
    TENANT_NOT_PERMITTED = "tenant-not-permitted"
    BUDGET_EXCEEDED = "budget-exceeded"
    STEP_BUDGET_EXCEEDED_BY_STATE_COST = "step-budget-exceeded-by-state-cost"
    ARTIFACT_LOAD_EXCEEDS_STEP_BUDGET = "artifact-load-exceeds-step-budget"
    TAIL_OBJECTIVE_BREACHED = "tail-objective-breached"
    ENDPOINT_UNREACHABLE = "endpoint-unreachable"
    REQUIRED_ELEMENT_ABSENT = "required-element-absent"
    REQUIRED_TOOL_RESULT_ABSENT = "required-tool-result-absent"
    DETERMINISM_NOT_OFFERED = "determinism-not-offered"
    MODE_NOT_SUPPORTED = "mode-not-supported"
    TRANSFER_WINDOW_CLOSED = "transfer-window-closed"
    UNTRUSTED_SOURCE_DOMINATES = "untrusted-source-dominates"
    INSTANCE_UNHEALTHY = "instance-unhealthy"


CONDITION_REASON = {
    ValueCondition.UNKNOWN: Reason.VALUE_UNKNOWN,
    ValueCondition.STALE: Reason.VALUE_STALE,
    ValueCondition.UNATTRIBUTED: Reason.VALUE_UNATTRIBUTED,
    ValueCondition.MEAN_FOR_TAIL: Reason.VALUE_MEAN_FOR_TAIL,
}
"""The cats-t value-not-usable identity of each condition that fails a constraint (M20)."""


class InvalidationCondition(StrEnum):
    """invalidation-condition of MSG-14 (9.1)."""

    VALUE_EXPIRED = "value-expired"
    VALUE_CONTRADICTED = "value-contradicted"
    INSTANCE_DEGRADED = "instance-degraded"
    STATE_EVICTED = "state-evicted"
    ENDPOINT_LOST = "endpoint-lost"
    STEP_OVERRUN = "step-overrun"


class ThresholdAction(StrEnum):
    """budget-pacing threshold action (DP9, T9)."""

    NOTIFY = "notify"
    PACE = "pace"
    REFUSE = "refuse"


class TailAction(StrEnum):
    """tail-event notification action (P10)."""

    DEGRADE = "degrade"
    MIGRATE = "migrate"
    FAIL_STEP = "fail-step"
    NONE = "none"


class Health(StrEnum):
    """cats-t:health-status of an instance (T7)."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    UNHEALTHY = "unhealthy"
    UNKNOWN = "unknown"
