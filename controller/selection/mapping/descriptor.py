"""Layer 1, the agent service descriptor of one step (agent draft 6.2, 7.1).

The descriptor states what the step needs as constraints and preferences; every element that
can play either role says which (M18). Sizes are bytes, times seconds, budgets in the unit of
their dimension (time in seconds).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    BudgetKind,
    CommunicationMode,
    DegradationClass,
    DeterminismClass,
    Element,
    ElementClass,
    EndpointKind,
    ObjectiveQuantity,
    Precision,
    Role,
    Scope,
)
from controller.types import CsId, Prefix, RegionId, ReuseKey, SessionId, TenantId, TierName


@dataclass(frozen=True, slots=True)
class WorkingSetElement:
    """One element of the (accumulated) working set (6.3, 7.1 working-set, M22, M27, M28).

    ``role`` CONSTRAINT: the step cannot run without the element (a tool result that cannot be
    re-obtained). ``may_move`` False: the element stays where it is held (M28).
    ``permitted_regions`` narrows the locality of its class. ``sufficient`` False: the element
    may be left behind when the working set is truncated (M27).
    """

    reuse_key: ReuseKey
    element_class: ElementClass
    element_size: int | None = None
    tokens_to_reprocess: int | None = None
    role: Role = Role.PREFERENCE
    sufficient: bool = True
    may_move: bool = True
    permitted_regions: frozenset[RegionId] = frozenset()
    max_age: float | None = None
    max_missing_fraction: float | None = None


@dataclass(frozen=True, slots=True)
class Locality:
    """locality: the regions permitted for an element class, always a constraint (M6)."""

    element_class: ElementClass
    permitted_regions: frozenset[RegionId]
    scope: Scope = Scope.SESSION


@dataclass(frozen=True, slots=True)
class Budget:
    """budget: a dimension and a scope with its limit, ceiling or target (M15).

    ``remaining`` is the sender's view of limit minus consumed; time is in seconds.
    """

    dimension: BudgetDimension
    scope: Scope
    limit: float
    kind: BudgetKind
    remaining: float | None = None

    @property
    def role(self) -> Role:
        """A ceiling is a constraint, a target a preference."""
        return Role.CONSTRAINT if self.kind is BudgetKind.CEILING else Role.PREFERENCE


@dataclass(frozen=True, slots=True)
class Objective:
    """objective: a quantity at a percentile over a window, or a mean that says so (M17, M33).

    ``percentile`` None means the objective is stated on a mean. ``role`` CONSTRAINT makes
    tail_ok a filter (P4); PREFERENCE makes it a bound on the outcome in P6, never a term.
    """

    quantity: ObjectiveQuantity
    target: float
    percentile: float | None = 95.0
    window: float | None = None
    scope: Scope = Scope.STEP
    weight: float = 1.0
    role: Role = Role.PREFERENCE


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An endpoint (tool, data source) the step will contact (6.2, 6.8 step 3, M3)."""

    prefix: Prefix
    name: str = ""
    kind: EndpointKind | None = None
    role: Role = Role.CONSTRAINT
    expected_calls: int = 1
    parallel: bool = False


@dataclass(frozen=True, slots=True)
class RequiredModel:
    """The model and adapters the step requires (6.3 computing constraints)."""

    name: str | None = None
    version: str | None = None
    adapters: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Descriptor:
    """The descriptor of one step (7.1); absent elements are unknown (7.5).

    ``context_length`` is the hi end of the context-length range in tokens.
    ``tail_tolerance`` is the largest probability of missing the objective (M17).
    ``freshness_need`` maps an element to the largest usable age in seconds.
    ``state_reuse_weight`` (0..1) weighs affinity against load balancing (13).
    """

    service_id: CsId
    session_id: SessionId
    tenant: TenantId
    turn_id: int | None = None
    step_id: int | None = None
    capability_tier: TierName | None = None
    required_precision: frozenset[Precision] = frozenset()
    context_length: int | None = None
    required_model: RequiredModel | None = None
    required_determinism: DeterminismClass | None = None
    working_set: tuple[WorkingSetElement, ...] = ()
    locality: tuple[Locality, ...] = ()
    budgets: tuple[Budget, ...] = ()
    objectives: tuple[Objective, ...] = ()
    tail_tolerance: float | None = None
    degradation: tuple[DegradationClass, ...] = ()
    freshness_need: tuple[tuple[Element, float], ...] = ()
    horizon: int | None = None
    remaining_horizon: int | None = None
    mode: CommunicationMode | None = None
    endpoints: tuple[Endpoint, ...] = ()
    state_reuse_weight: float | None = None
    max_added_delay: float | None = None
    scope: Scope = Scope.STEP

    def max_age(self, element: Element) -> float | None:
        """The freshness need of ``element`` (7.1 freshness-need), None when not stated."""
        for name, age in self.freshness_need:
            if name is element:
                return age
        return None

    def budget(self, dimension: BudgetDimension, scope: Scope) -> Budget | None:
        """The budget of ``dimension`` at ``scope``."""
        for entry in self.budgets:
            if entry.dimension is dimension and entry.scope is scope:
                return entry
        return None

    def objective(self, role: Role) -> Objective | None:
        """The step objective with ``role`` (the first stated)."""
        for entry in self.objectives:
            if entry.role is role:
                return entry
        return None

    def with_working_set(self, working_set: tuple[WorkingSetElement, ...]) -> Descriptor:
        """The same descriptor over another (accumulated or truncated) working set (5.2)."""
        return replace(self, working_set=working_set)
