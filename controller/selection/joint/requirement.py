"""The client service requirement and the selection settings (service-metrics-op 6.2.3-6.2.5).

These values mirror the ``service-requirement`` grouping and the ``selection-policy`` and
``update-control`` containers of ietf-cats-service-metrics; the wiring merges the default,
the per-service policy and the request override into one :class:`Requirement`. An absent
threshold (None) means that the constraint is not in force.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from controller.selection.joint.vocabulary import (
    LoadMethod,
    Metric,
    Objective,
    OverrideMode,
    RelaxationStep,
    TieBreak,
)
from controller.selection.units import Micros, Timestamp
from controller.types import CsciId, CsId, ForwarderId

Threshold = int | Decimal
"""A count, price, Mbps or ppm threshold; Fallback Level 1 percentages make it a decimal."""


@dataclass(frozen=True, slots=True)
class HardConstraints:
    """Steps 2 and 5 of 6.2.3 and the Constraint-Based Selection of 6.2.4."""

    min_security_level: int | None = None
    require_validated_security_level: bool = False
    min_reputation: int | None = None
    max_price: Threshold | None = None
    required_gas: int = 1
    min_bandwidth: Threshold | None = None
    max_jitter: Micros | None = None
    max_loss_rate: Threshold | None = None
    max_latency: Micros | None = None
    accept_degraded: bool = True


@dataclass(frozen=True, slots=True)
class SoftConstraint:
    """A soft constraint (6.2.3 Step 6): a violation adds ``penalty`` to the score.

    The threshold is a minimum for higher-is-better metrics, a maximum otherwise, in the unit
    of the metric (time metrics in microseconds).
    """

    metric: Metric
    threshold: float
    penalty: float


@dataclass(frozen=True, slots=True)
class Bounds:
    """Configured minimum and maximum expected values of a metric for n(x) (6.2.4)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if self.high < self.low:
            raise ValueError("normalization maximum below its minimum")


@dataclass(frozen=True, slots=True)
class Weights:
    """w1..w8 of the weighted objective function (6.2.4); default pure TST (w1 = 1)."""

    total_service_time: float = 1.0
    price: float = 0.0
    gas: float = 0.0
    reputation: float = 0.0
    security_level: float = 0.0
    bandwidth: float = 0.0
    loss_rate: float = 0.0
    jitter: float = 0.0

    def by_metric(self) -> dict[Metric, float]:
        """The non-zero weights by metric (do not mutate the returned map)."""
        return _by_metric(self)


@functools.lru_cache(maxsize=256)
def _by_metric(weights: Weights) -> dict[Metric, float]:
    pairs = {
        Metric.TOTAL_SERVICE_TIME: weights.total_service_time,
        Metric.PRICE: weights.price,
        Metric.GAS: weights.gas,
        Metric.REPUTATION: weights.reputation,
        Metric.SECURITY_LEVEL: weights.security_level,
        Metric.BANDWIDTH: weights.bandwidth,
        Metric.LOSS_RATE: weights.loss_rate,
        Metric.JITTER: weights.jitter,
    }
    return {metric: weight for metric, weight in pairs.items() if weight}


@dataclass(frozen=True, slots=True)
class GeoFence:
    """Geo-fencing (6.2.4): an empty region set disables it."""

    permitted_regions: frozenset[str] = frozenset()
    mode: OverrideMode = OverrideMode.PREFER


@dataclass(frozen=True, slots=True)
class ProviderPreference:
    """Provider preference (6.2.4): an empty provider set disables it."""

    preferred_providers: frozenset[str] = frozenset()
    mode: OverrideMode = OverrideMode.PREFER


@dataclass(frozen=True, slots=True)
class LoadDistribution:
    """Load balancing (6.2.4): candidates within ``tst_tolerance`` of the best share load."""

    tst_tolerance: Micros
    method: LoadMethod = LoadMethod.ROUND_ROBIN


@dataclass(frozen=True, slots=True)
class PolicyOverride:
    """Policy-driven overrides, which take precedence over the optimization (6.2.4)."""

    geo_fence: GeoFence = GeoFence()
    provider_preference: ProviderPreference = ProviderPreference()
    avoid_maintenance: bool = True
    load_distribution: LoadDistribution | None = None


@dataclass(frozen=True, slots=True)
class Requirement:
    """The merged client service requirement in force for one request (6.2.3, 6.2.4)."""

    hard: HardConstraints = HardConstraints()
    objectives: tuple[Objective, ...] = ()
    soft: tuple[SoftConstraint, ...] = ()
    weights: Weights = Weights()
    normalization: dict[Metric, Bounds] = field(default_factory=dict)
    tie_breaks: tuple[TieBreak, ...] = ()
    hierarchical: bool = False
    session_affinity: bool = False
    overrides: PolicyOverride = PolicyOverride()


@dataclass(frozen=True, slots=True)
class RelaxationAmount:
    """One Fallback Level 1 step and its amount (percent or points; None: the draft's)."""

    step: RelaxationStep
    amount: Decimal | None = None


DEFAULT_RELAXATION = tuple(RelaxationAmount(step) for step in RelaxationStep)
"""The nine relaxation steps of 6.2.5 in the draft's order, with its amounts."""


@dataclass(frozen=True, slots=True)
class FallbackPolicy:
    """Which fallback levels of 6.2.5 are enabled, and the Level 1 relaxation order."""

    relax_constraints: bool = True
    relaxation: tuple[RelaxationAmount, ...] = DEFAULT_RELAXATION
    max_rounds: int = 1
    network_only: bool = True
    default_route: bool = True


@dataclass(frozen=True, slots=True)
class SelectionSettings:
    """C-PS settings that apply to every request (selection-policy, update-control)."""

    time_sync_window: float = 30.0
    network_entry_lifetime: float | None = None
    fallback: FallbackPolicy = FallbackPolicy()
    random_seed: int = 0


@dataclass(frozen=True, slots=True)
class SelectionRequest:
    """A service request at an Ingress CATS-Forwarder (6.2.3).

    ``now`` is the decision time on the clock of the table timestamps; ``turn`` numbers the
    decision, so that seeded random draws and round-robin load distribution are reproducible;
    ``affined`` is the CSCI-ID the session is bound to, if any (6.2.4 Affinity Requirement);
    ``fallback_egresses`` are the service policy's extra egresses for Fallback Level 2;
    ``penalties`` are added to the Step 6 score of the CSCI-IDs they name (section 9: the
    flagged-entry penalty of entries that failed a plausibility check).
    """

    cs_id: CsId
    ingress: ForwarderId
    now: Timestamp
    requirement: Requirement = Requirement()
    affined: CsciId | None = None
    turn: int = 0
    fallback_egresses: tuple[ForwarderId, ...] = ()
    penalties: Mapping[CsciId, float] = field(default_factory=dict)
