"""What one decision derives from the descriptor once, before it looks at any candidate (8.1).

Preparing the descriptor once keeps the per-candidate work of P4 and P5 to comparisons:
the tier rank, the regions every element permits, the rank and window at which time is
compared, the step and session time budgets, the endpoints split by role.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.selection.mapping.context import SelectionContext, SessionPosition, TierCatalogue
from controller.selection.mapping.descriptor import Descriptor, Endpoint, Objective
from controller.selection.mapping.vocabulary import BudgetDimension, BudgetKind, Role, Scope
from controller.selection.mapping.workingset import PreparedWorkingSet
from controller.types import CsciId, RegionId

DEFAULT_RANK = 95.0
"""The percentile used where no objective states one (6.7 compares wait_p95, latency p95)."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """The descriptor of one decision, prepared for P4 and P5.

    ``permitted_regions`` is the intersection of every locality and element region set that
    applies to the working set (None: no locality constraint). ``tier_rank`` None with a tier
    stated means the catalogue does not know the tier: no candidate can satisfy it.
    """

    descriptor: Descriptor
    working_set: PreparedWorkingSet
    tier_rank: int | None
    permitted_regions: frozenset[RegionId] | None
    rank: float | None
    window: float | None
    tail_constraint: Objective | None
    preference: Objective | None
    step_time_budget: float | None
    session_time_remaining: float | None
    endpoints: tuple[Endpoint, ...]
    required_endpoints: tuple[Endpoint, ...]
    current: CsciId | None
    tiers: TierCatalogue
    context: SelectionContext
    horizon: int
    max_age: float | None


def _regions(descriptor: Descriptor) -> frozenset[RegionId] | None:
    """The regions where every element of the working set may be held (M6, M28)."""
    classes = {element.element_class for element in descriptor.working_set}
    sets = [loc.permitted_regions for loc in descriptor.locality if loc.element_class in classes]
    sets.extend(e.permitted_regions for e in descriptor.working_set if e.permitted_regions)
    if not sets:
        return None
    return frozenset.intersection(*sets)


def _session_time(descriptor: Descriptor, position: SessionPosition) -> float | None:
    budget = descriptor.budget(BudgetDimension.TIME, Scope.SESSION)
    if budget is None or budget.kind is not BudgetKind.CEILING:
        return None
    if budget.remaining is not None:
        return budget.remaining
    return budget.limit - position.session_consumed_time


def horizon(context: SelectionContext, remaining: int | None) -> int:
    """The steps over which a one-off cost is weighed: the look-ahead, cut to what remains
    of the session, at least this step (6.4, M37). With no remaining horizon stated nothing
    is known to follow the step, so it is this step alone (the module's look-ahead-horizon
    says so; 8.4's first example holds under the module's default of 5)."""
    if remaining is None:
        return 1
    return max(min(context.look_ahead_horizon, remaining), 1)


def prepare(
    descriptor: Descriptor,
    tiers: TierCatalogue,
    context: SelectionContext,
    position: SessionPosition,
) -> Prepared:
    """Prepare ``descriptor`` for one decision (P2 output, input of P4 and P5)."""
    tail = descriptor.objective(Role.CONSTRAINT)
    preference = descriptor.objective(Role.PREFERENCE)
    stated = tail or preference
    rank = DEFAULT_RANK if stated is None else stated.percentile
    if rank is not None and descriptor.tail_tolerance is not None:
        rank = max(rank, round(100.0 * (1.0 - descriptor.tail_tolerance), 3))
    step_budget = descriptor.budget(BudgetDimension.TIME, Scope.STEP)
    return Prepared(
        descriptor=descriptor,
        working_set=PreparedWorkingSet.of(descriptor),
        tier_rank=tiers.rank(descriptor.capability_tier),
        permitted_regions=_regions(descriptor),
        rank=rank,
        window=None if stated is None else stated.window,
        tail_constraint=tail,
        preference=preference,
        step_time_budget=(
            step_budget.limit
            if step_budget is not None and step_budget.kind is BudgetKind.CEILING
            else None
        ),
        session_time_remaining=_session_time(descriptor, position),
        endpoints=descriptor.endpoints,
        required_endpoints=tuple(e for e in descriptor.endpoints if e.role is Role.CONSTRAINT),
        current=position.current,
        tiers=tiers,
        context=context,
        horizon=horizon(context, descriptor.remaining_horizon),
        max_age=min((age for _, age in descriptor.freshness_need), default=None),
    )
