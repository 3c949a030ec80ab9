"""Layer 3, the selection context, and the session position a decision starts from (6.4, 8.3).

The context is what the operator configures (with per-session overrides of the descriptor);
the position is what the C-PS knows of the session at the decision point: the commitment in
force, when the session last moved, whether a step is in flight. Times are seconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from controller.selection.mapping.vocabulary import Dimension, ThresholdAction, Trigger
from controller.selection.units import Timestamp
from controller.types import CommitmentId, CsciId, TierName


@dataclass(frozen=True, slots=True)
class TierCatalogue:
    """capability-tiers: tier name to rank; a name outside the catalogue is unknown (M19)."""

    ranks: Mapping[TierName, int] = field(default_factory=lambda: MappingProxyType({}))

    def rank(self, tier: TierName | None) -> int | None:
        """The rank of ``tier``, None when unknown."""
        return None if tier is None else self.ranks.get(tier)

    def below(self, tier: TierName, steps: int = 1) -> TierName | None:
        """The tier ``steps`` ranks below ``tier`` (lower-capability-tier degradation)."""
        rank = self.ranks.get(tier)
        if rank is None:
            return None
        for name, other in self.ranks.items():
            if other == rank - steps:
                return name
        return None


@dataclass(frozen=True, slots=True)
class Stability:
    """The stability requirement (8.3): ``min_improvement`` is relative, a fraction of the
    magnitude of the current instance's suitability that the best one must improve on it by
    (0.1: 10 %); ``sustain_period`` qualifies T5; times are seconds."""

    min_interval: float = 0.0
    min_improvement: float = 0.0
    sustain_period: float = 0.0


@dataclass(frozen=True, slots=True)
class Band:
    """One band of the banding policy: edges are origin + k * width, known to the decision."""

    width: float
    origin: float = 0.0

    def index(self, value: float) -> int:
        """The k of the band edge that ``value`` lies on or above."""
        return math.floor((value - self.origin) / self.width)


@dataclass(frozen=True, slots=True)
class Weighted:
    """The weighted combination rule (M7): suitability = -sum(weight * expected time)."""

    weights: tuple[tuple[Dimension, float], ...] = (
        (Dimension.FORWARDING, 1.0),
        (Dimension.COMPUTING, 1.0),
        (Dimension.STORAGE, 1.0),
    )


@dataclass(frozen=True, slots=True)
class Lexicographic:
    """The lexicographic combination rule (M7): the first dimension decides, the next breaks
    ties within a band, and so on."""

    order: tuple[Dimension, ...] = (Dimension.STORAGE, Dimension.COMPUTING, Dimension.FORWARDING)


CombinationRule = Weighted | Lexicographic


@dataclass(frozen=True, slots=True)
class BudgetPacing:
    """budget-pacing (M38, DP9): reserve share and thresholds (consumed fraction, action)."""

    uneven_spending: bool = False
    reserve_fraction: float = 0.0
    thresholds: tuple[tuple[float, ThresholdAction], ...] = ()


@dataclass(frozen=True, slots=True)
class SelectionContext:
    """The selection context in force (6.4, 13, 14).

    ``bands`` maps a dimension (or None for the suitability) to its band.
    ``disturbance`` is the cost in seconds of moving a step in flight (P7).
    ``max_decision_rate`` is per session per minute; None is unbounded.
    """

    stability: Stability = Stability()
    bands: Mapping[Dimension | None, Band] = field(default_factory=lambda: MappingProxyType({}))
    look_ahead_horizon: int = 1
    pacing: BudgetPacing = BudgetPacing()
    combination: CombinationRule = Weighted()
    tail_detection_factor: float = 10.0
    max_decision_rate: int | None = None
    disturbance: float = 0.0


@dataclass(frozen=True, slots=True)
class Commitment:
    """A commitment: the binding of steps to an instance with an explicit lifetime (6.5, P8)."""

    commitment_id: CommitmentId
    csci_id: CsciId
    first_step: int
    created_at: Timestamp
    lifetime: float | None = None
    last_step: int | None = None

    def covers(self, step_id: int | None, now: Timestamp) -> bool:
        """Whether the commitment still binds ``step_id`` at ``now`` (T1)."""
        if self.lifetime is not None and now > self.created_at + self.lifetime:
            return False
        if step_id is None or step_id < self.first_step:
            return False
        return self.last_step is not None and step_id <= self.last_step


@dataclass(frozen=True, slots=True)
class SessionPosition:
    """What the C-PS knows of the session when it decides (6.4, 8.3).

    ``last_move_at`` is None when the session never moved. ``watching`` is the candidate held
    and watched at an earlier decision and since when its improvement persists (T5).
    """

    commitment: Commitment | None = None
    last_move_at: Timestamp | None = None
    step_in_flight: bool = False
    watching: tuple[CsciId, Timestamp] | None = None
    session_consumed_time: float = 0.0

    @property
    def current(self) -> CsciId | None:
        """The instance of the commitment in force."""
        return None if self.commitment is None else self.commitment.csci_id


@dataclass(frozen=True, slots=True)
class Policy:
    """What the C-PS applies to every decision: the context in force, the tier catalogue and
    the source discounts of the candidates (14)."""

    context: SelectionContext = SelectionContext()
    tiers: TierCatalogue = TierCatalogue()
    discounts: Mapping[CsciId, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Occasion:
    """The decision point a decision is taken at: its trigger (None at admission), the time,
    and the steps the session is expected still to run."""

    trigger: Trigger | None
    now: Timestamp
    remaining_horizon: int | None = None
