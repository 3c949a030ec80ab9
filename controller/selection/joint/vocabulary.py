"""Identifiers and the YANG identity names the selection core speaks.

The enum values are the identity names of ietf-cats-service-metrics (and ietf-cats-types for
the value conditions), so a decision renders to YANG by prefixing the module name.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class Health(StrEnum):
    """cats-t:health-status; unknown is treated as unhealthy (sci-implementation 5.2)."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    UNHEALTHY = "unhealthy"
    UNKNOWN = "unknown"


class Metric(StrEnum):
    """Identities derived from cats-sm:selection-metric."""

    GAS = "gas"
    COMPUTING_TIME = "computing-time"
    PRICE = "price"
    REPUTATION = "reputation"
    SECURITY_LEVEL = "security-level"
    NETWORK_DELAY = "network-delay"
    JITTER = "jitter"
    BANDWIDTH = "bandwidth"
    LOSS_RATE = "loss-rate"
    TOTAL_SERVICE_TIME = "total-service-time"


HIGHER_IS_BETTER = frozenset(
    {Metric.GAS, Metric.REPUTATION, Metric.SECURITY_LEVEL, Metric.BANDWIDTH}
)
"""Metrics maximized by Step 6 and written as (1 - n(x)) in the weighted objective (6.2.4)."""


class Objective(StrEnum):
    """cats-sm:optimization-objective, in the priority order of 6.2.3 Step 6."""

    MAXIMIZE_SECURITY_LEVEL = "maximize-security-level"
    MAXIMIZE_REPUTATION = "maximize-reputation"
    MINIMIZE_PRICE = "minimize-price"
    MAXIMIZE_GAS = "maximize-gas"
    MAXIMIZE_BANDWIDTH = "maximize-bandwidth"
    MINIMIZE_JITTER = "minimize-jitter"
    MINIMIZE_LOSS_RATE = "minimize-loss-rate"
    MINIMIZE_LATENCY = "minimize-latency"


OBJECTIVE_METRIC: dict[Objective, Metric] = {
    Objective.MAXIMIZE_SECURITY_LEVEL: Metric.SECURITY_LEVEL,
    Objective.MAXIMIZE_REPUTATION: Metric.REPUTATION,
    Objective.MINIMIZE_PRICE: Metric.PRICE,
    Objective.MAXIMIZE_GAS: Metric.GAS,
    Objective.MAXIMIZE_BANDWIDTH: Metric.BANDWIDTH,
    Objective.MINIMIZE_JITTER: Metric.JITTER,
    Objective.MINIMIZE_LOSS_RATE: Metric.LOSS_RATE,
    Objective.MINIMIZE_LATENCY: Metric.TOTAL_SERVICE_TIME,
}


class TieBreak(StrEnum):
    """cats-sm:tie-break-rule (6.2.3 Step 6)."""

    HIGHEST_GAS = "highest-gas"
    LOWEST_PRICE = "lowest-price"
    HIGHEST_REPUTATION = "highest-reputation"
    RANDOM = "random"


DEFAULT_TIE_BREAKS = (
    TieBreak.HIGHEST_GAS,
    TieBreak.LOWEST_PRICE,
    TieBreak.HIGHEST_REPUTATION,
    TieBreak.RANDOM,
)
"""The tie-breaking rules of 6.2.3 Step 6, in the draft's order."""


class RelaxationStep(StrEnum):
    """cats-sm:relaxation-step, the Fallback Level 1 items of 6.2.5."""

    RELAX_PRICE = "relax-price"
    RELAX_SECURITY_LEVEL = "relax-security-level"
    RELAX_REPUTATION = "relax-reputation"
    RELAX_GAS = "relax-gas"
    RELAX_BANDWIDTH = "relax-bandwidth"
    RELAX_JITTER = "relax-jitter"
    RELAX_LOSS_RATE = "relax-loss-rate"
    RELAX_LATENCY = "relax-latency"
    ACCEPT_DEGRADED = "accept-degraded"


class ExclusionReason(StrEnum):
    """Identities derived from cats-t:exclusion-reason, one per comparison or rule."""

    GAS_EXHAUSTED = "gas-exhausted"
    ENTRY_EXPIRED = "entry-expired"
    INSTANCE_UNHEALTHY = "instance-unhealthy"
    DEGRADED_NOT_ACCEPTED = "degraded-not-accepted"
    SECURITY_LEVEL_BELOW_MINIMUM = "security-level-below-minimum"
    SECURITY_LEVEL_NOT_VALIDATED = "security-level-not-validated"
    REPUTATION_BELOW_MINIMUM = "reputation-below-minimum"
    PRICE_ABOVE_MAXIMUM = "price-above-maximum"
    GAS_INSUFFICIENT = "gas-insufficient"
    EGRESS_UNKNOWN = "egress-unknown"
    NO_NETWORK_PATH = "no-network-path"
    NETWORK_ENTRY_OUT_OF_SYNC = "network-entry-out-of-sync"
    BANDWIDTH_BELOW_MINIMUM = "bandwidth-below-minimum"
    JITTER_ABOVE_MAXIMUM = "jitter-above-maximum"
    LOSS_RATE_ABOVE_MAXIMUM = "loss-rate-above-maximum"
    LATENCY_ABOVE_MAXIMUM = "latency-above-maximum"
    OUTSIDE_GEO_FENCE = "outside-geo-fence"
    PROVIDER_NOT_PREFERRED = "provider-not-preferred"
    UNDER_MAINTENANCE = "under-maintenance"
    NOT_ON_SELECTED_EGRESS = "not-on-selected-egress"
    VALUE_UNKNOWN = "value-unknown"
    VALUE_STALE = "value-stale"


STEP1_REASONS = frozenset(
    {
        ExclusionReason.GAS_EXHAUSTED,
        ExclusionReason.ENTRY_EXPIRED,
        ExclusionReason.INSTANCE_UNHEALTHY,
        ExclusionReason.DEGRADED_NOT_ACCEPTED,
    }
)
"""Step 1 (Service Lookup) exclusions: the entry has no usable computing metrics."""

STEP3_REASONS = frozenset(
    {
        ExclusionReason.EGRESS_UNKNOWN,
        ExclusionReason.NO_NETWORK_PATH,
        ExclusionReason.NETWORK_ENTRY_OUT_OF_SYNC,
    }
)
"""Step 3 (Network Path Lookup) exclusions: no usable network path for the candidate."""


class ValueCondition(StrEnum):
    """cats-t:value-not-usable: why a value could not be used (agent draft 7.5)."""

    UNKNOWN = "value-unknown"
    STALE = "value-stale"


class FallbackLevel(IntEnum):
    """cats-sm:fallback-level (6.2.5); the int is the YANG enum value."""

    NONE = 0
    RELAX_CONSTRAINTS = 1
    NETWORK_ONLY = 2
    DEFAULT_ROUTE = 3


class ResultKind(StrEnum):
    """cats-sm:selection-result."""

    SELECTED = "selected"
    EGRESS_ONLY = "egress-only"
    DEFAULT_ROUTE = "default-route"
    SERVICE_UNAVAILABLE = "service-unavailable"


class DecidedBy(StrEnum):
    """Which stage of Step 6 decided a selection (selection-outcome/decided-by)."""

    ONLY_CANDIDATE = "only-candidate"
    AFFINITY = "affinity"
    OBJECTIVE = "objective"
    SCORE = "score"
    TIE_BREAK = "tie-break"
    LOAD_DISTRIBUTION = "load-distribution"


class OverrideMode(StrEnum):
    """cats-sm:override-mode of a policy-driven override (6.2.4)."""

    PREFER = "prefer"
    RESTRICT = "restrict"


class LoadMethod(StrEnum):
    """How load distribution spreads selections over equal candidates (6.2.4)."""

    ROUND_ROBIN = "round-robin"
    GAS_WEIGHTED = "gas-weighted"
