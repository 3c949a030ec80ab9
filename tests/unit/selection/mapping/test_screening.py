"""P4 constraint filtering, a reason code per exclusion (M1, M2, M6, M19, M20, M28, M34, M50)."""

from __future__ import annotations

from dataclasses import replace

from controller.selection.mapping import (
    Budget,
    Distribution,
    Endpoint,
    EndpointCost,
    Exclusion,
    Locality,
    Objective,
    RequiredModel,
)
from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    BudgetKind,
    CommunicationMode,
    Confidence,
    DeterminismClass,
    Element,
    ElementClass,
    Health,
    ObjectiveQuantity,
    Precision,
    Reason,
    Role,
    Scope,
)
from controller.types import Prefix, RegionId, TenantId
from tests.unit.selection.mapping.builders import (
    GB,
    WINDOW,
    R,
    candidate,
    descriptor,
    dist,
    element,
    held,
    meta,
    run,
)

EC = ElementClass
TOOL = Prefix("192.0.2.0/24")


def _reasons(exclusions: tuple[Exclusion, ...]) -> list[tuple[Reason, Element]]:
    return [(e.reason, e.constraint) for e in exclusions]


def test_m1_constraints_filter_before_ranking_even_the_fastest_candidate() -> None:
    fast_but_small = candidate("A", tier="small", delay=0.001, wait=0.0, latency=0.01)
    slow = candidate("B", delay=0.5)
    result = run(descriptor(), [fast_but_small, slow])
    assert result.selected == "B"
    assert result.result("A").scored is None
    assert result.result("A").rank is None
    assert result.eligible == ("B",)


def test_m19_capability_tier_is_never_traded_for_distance() -> None:
    result = run(descriptor(), [candidate("A", tier="small", delay=0.001)])
    (exclusion,) = result.result("A").exclusions
    assert (exclusion.reason, exclusion.comparison, exclusion.required, exclusion.observed) == (
        Reason.CAPABILITY_TIER_BELOW_REQUIRED,
        "tier-offered >= capability-tier",
        "tier capable",
        "tier small",
    )


def test_m2_m19_set_membership_for_precision_and_tier_outside_the_catalogue() -> None:
    step = descriptor(required_precision=frozenset({Precision.FP32}))
    result = run(step, [candidate("A"), candidate("B", tier="galactic")])
    assert _reasons(result.result("A").exclusions) == [
        (Reason.PRECISION_NOT_SUPPORTED, Element.REQUIRED_PRECISION)
    ]
    assert _reasons(result.result("B").exclusions) == [
        (Reason.VALUE_UNKNOWN, Element.CAPABILITY_TIER),
        (Reason.PRECISION_NOT_SUPPORTED, Element.REQUIRED_PRECISION),
    ]


def test_m50_context_window_too_small_names_both_sides() -> None:
    result = run(descriptor(context_length=128_000), [candidate("A", context_window=32_000)])
    (exclusion,) = result.result("A").exclusions
    assert (exclusion.reason, exclusion.required, exclusion.observed) == (
        Reason.CONTEXT_WINDOW_TOO_SMALL,
        "128000 tokens",
        "32000 tokens",
    )


def test_m50_memory_does_not_fit_reports_the_comparison() -> None:
    ctx = element("ctx", EC.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000)
    result = run(descriptor(working_set=(ctx,)), [candidate("A", hbm_free=20 * GB, resident=False)])
    (exclusion,) = result.result("A").exclusions
    assert exclusion.reason is Reason.MEMORY_DOES_NOT_FIT
    assert exclusion.comparison == "state_bytes <= hbm_free - weights_bytes"
    assert (exclusion.required, exclusion.observed) == ("7.50 GB state", "4.77 GB free")


def test_m6_locality_excludes_a_candidate_outside_the_region_however_good() -> None:
    ctx = element("ctx", EC.MODEL_CONTEXT_STATE, 1 * GB, 10_000)
    step = descriptor(
        working_set=(ctx,), locality=(Locality(EC.MODEL_CONTEXT_STATE, frozenset({R})),)
    )
    abroad = candidate("X", region="S", delay=0.001, state=held("ctx"))
    unknown = candidate("U", region=None)
    home = candidate("H", delay=0.9)
    result = run(step, [abroad, unknown, home])
    assert _reasons(result.result("X").exclusions) == [
        (Reason.LOCALITY_NOT_PERMITTED, Element.LOCALITY),
        (Reason.PATH_REGION_NOT_PERMITTED, Element.LOCALITY),
    ]
    assert _reasons(result.result("U").exclusions) == [
        (Reason.VALUE_UNKNOWN, Element.LOCALITY),
        (Reason.PATH_REGION_NOT_PERMITTED, Element.LOCALITY),
    ]
    assert result.selected == "H"


def test_m6_tenant_is_a_constraint() -> None:
    guarded = replace(candidate("A"), permitted_tenants=frozenset({TenantId("tenant-9")}))
    result = run(descriptor(), [guarded])
    (exclusion,) = result.result("A").exclusions
    assert (exclusion.reason, exclusion.required, exclusion.observed) == (
        Reason.TENANT_NOT_PERMITTED,
        "tenant-1",
        "tenant-9",
    )


def test_m28_element_that_may_not_move_keeps_the_step_where_it_is() -> None:
    profile = element("profile", EC.LONG_TERM_MEMORY, 1e4, 100, may_move=False)
    result = run(
        descriptor(working_set=(profile,)), [candidate("A"), candidate("B", state=held("profile"))]
    )
    assert _reasons(result.result("A").exclusions) == [
        (Reason.ELEMENT_MAY_NOT_MOVE, Element.WORKING_SET)
    ]
    assert result.selected == "B"


def test_m28_an_element_permitted_only_in_a_region_narrows_the_candidates() -> None:
    profile = element(
        "profile", EC.LONG_TERM_MEMORY, 1e4, 100, permitted_regions=frozenset({RegionId("S")})
    )
    result = run(descriptor(working_set=(profile,)), [candidate("A")])
    assert _reasons(result.result("A").exclusions)[0] == (
        Reason.LOCALITY_NOT_PERMITTED,
        Element.LOCALITY,
    )


def test_m20_stale_unattributed_and_absent_capability_never_satisfy() -> None:
    stale = candidate("S", capability_meta=meta(age=60.0, bound=30.0))
    anonymous = candidate("N", capability_meta=meta(source=None))
    tierless = candidate("T", tier=None)
    result = run(descriptor(), [stale, anonymous, tierless])
    assert _reasons(result.result("S").exclusions) == [
        (Reason.VALUE_STALE, Element.CAPABILITY_TIER)
    ]
    assert _reasons(result.result("N").exclusions) == [
        (Reason.VALUE_UNATTRIBUTED, Element.CAPABILITY_TIER)
    ]
    assert _reasons(result.result("T").exclusions) == [
        (Reason.VALUE_UNKNOWN, Element.CAPABILITY_TIER)
    ]
    assert result.failure is not None


def _mean(value: float) -> Distribution:
    """A computing distribution that states only its mean."""
    return Distribution((), meta(), WINDOW, mean=value)


TAIL = Objective(ObjectiveQuantity.STEP_COMPLETION_TIME, 1.0, 95.0, WINDOW, role=Role.CONSTRAINT)


def test_m34_a_mean_never_satisfies_a_tail_constraint_however_small() -> None:
    means = (_mean(0.001), _mean(0.002))
    result = run(descriptor(objectives=(TAIL,)), [candidate("A", computing=means)])
    assert _reasons(result.result("A").exclusions) == [
        (Reason.VALUE_MEAN_FOR_TAIL, Element.OBJECTIVE)
    ]


def test_m50_tail_objective_breached_at_p95() -> None:
    result = run(descriptor(objectives=(TAIL,)), [candidate("A", wait=0.4, latency=0.7)])
    (exclusion,) = result.result("A").exclusions
    assert (exclusion.reason, exclusion.required, exclusion.observed) == (
        Reason.TAIL_OBJECTIVE_BREACHED,
        "1.000 s at p95.0",
        "1.1 s",
    )


def test_m50_step_budget_exceeded_by_state_cost_and_by_artifact_load() -> None:
    ctx = element("ctx", EC.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000)
    step_budget = Budget(BudgetDimension.TIME, Scope.STEP, 2.0, BudgetKind.CEILING)
    step = descriptor(working_set=(ctx,), budgets=(step_budget,))
    cold = candidate("A", resident=False, hbm_free=80 * GB)
    holder = candidate("C", state=held("ctx"))
    result = run(step, [cold, holder])
    assert _reasons(result.result("A").exclusions) == [
        (Reason.STEP_BUDGET_EXCEEDED_BY_STATE_COST, Element.BUDGET),
        (Reason.ARTIFACT_LOAD_EXCEEDS_STEP_BUDGET, Element.BUDGET),
    ]
    assert [e.observed for e in result.result("A").exclusions] == ["3.008 s", "7.615 s"]


def test_m46_session_budget_excludes_a_change_it_cannot_pay_for() -> None:
    ctx = element("ctx", EC.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000)
    session = Budget(BudgetDimension.TIME, Scope.SESSION, 100.0, BudgetKind.CEILING, remaining=2.5)
    result = run(descriptor(working_set=(ctx,), budgets=(session,)), [candidate("B")])
    assert _reasons(result.result("B").exclusions) == [(Reason.BUDGET_EXCEEDED, Element.BUDGET)]


def test_m3_unreachable_or_unknown_endpoint_excludes() -> None:
    step = descriptor(endpoints=(Endpoint(TOOL, "retrieval"),))
    dead = candidate("D", endpoints={TOOL: EndpointCost(TOOL, reachable=False, cost=dist(0.1))})
    silent = candidate("U")
    alive = candidate("A", endpoints={TOOL: EndpointCost(TOOL, reachable=True, cost=dist(0.1))})
    result = run(step, [dead, silent, alive])
    assert _reasons(result.result("D").exclusions) == [
        (Reason.ENDPOINT_UNREACHABLE, Element.ENDPOINT)
    ]
    assert _reasons(result.result("U").exclusions) == [(Reason.VALUE_UNKNOWN, Element.ENDPOINT)]
    assert result.selected == "A"


def test_determinism_mode_and_health_are_constraints() -> None:
    step = descriptor(
        required_determinism=DeterminismClass.BOUNDED_LATENCY, mode=CommunicationMode.STREAMING
    )
    sick = candidate("S")
    sick = replace(sick, view=replace(sick.view, health=Health.UNHEALTHY))
    result = run(step, [sick])
    assert _reasons(result.result("S").exclusions) == [
        (Reason.INSTANCE_UNHEALTHY, Element.SERVICE_ID),
        (Reason.DETERMINISM_NOT_OFFERED, Element.PATH_SET),
    ]


def test_model_version_not_offered() -> None:
    step = descriptor(required_model=RequiredModel("qwen", "72b"))
    result = run(step, [candidate("A")])
    assert _reasons(result.result("A").exclusions) == [
        (Reason.MODEL_VERSION_NOT_OFFERED, Element.CAPABILITY_TIER)
    ]


def test_m50_every_failed_comparison_is_reported_not_only_the_first() -> None:
    step = descriptor(context_length=300_000, required_precision=frozenset({Precision.FP32}))
    result = run(step, [candidate("A", tier="small")])
    assert [e.reason for e in result.result("A").exclusions] == [
        Reason.CAPABILITY_TIER_BELOW_REQUIRED,
        Reason.CONTEXT_WINDOW_TOO_SMALL,
        Reason.PRECISION_NOT_SUPPORTED,
    ]


def test_m28_a_copy_its_holder_keeps_in_place_is_not_moved_to_another_candidate() -> None:
    memory = element("memory", EC.LONG_TERM_MEMORY, 1e4, 100)
    holder = candidate("H", delay=0.9, state=held("memory", may_not_move=True))
    near = candidate("X", delay=0.001)
    result = run(descriptor(working_set=(memory,)), [near, holder])
    assert _reasons(result.result("X").exclusions) == [
        (Reason.ELEMENT_MAY_NOT_MOVE, Element.WORKING_SET)
    ]
    assert result.selected == "H"
    free = run(
        descriptor(working_set=(memory,)), [near, candidate("H", delay=0.9, state=held("memory"))]
    )
    assert free.selected == "X"


def test_m20_an_estimated_group_without_the_value_leaves_it_unknown() -> None:
    """A capability estimated by its source but naming no tier: the tier is unknown (it
    failed with a KeyError: an estimate has no exclusion reason of its own)."""
    no_tier = candidate("A", tier=None, capability_meta=meta(confidence=Confidence.ESTIMATED))
    result = run(descriptor(), [no_tier, candidate("B")])
    assert result.eligible == ("B",)
    assert _reasons(result.result("A").exclusions) == [
        (Reason.VALUE_UNKNOWN, Element.CAPABILITY_TIER)
    ]
