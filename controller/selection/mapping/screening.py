"""P4, constraint filtering with one reason code per failed comparison (8.1 P4, 6.8; M6, M50).

Constraints filter before anything ranks (M1). A constraint that rests on an absent, stale or
unattributed value is not satisfied (M20), a mean never satisfies a tail constraint (M34), and
the capability tier and precision are never traded for distance (6.6 Table 2). Every check
appends the exclusion of the comparison that rejected the candidate, so a decision reports
all of them (M50).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum

from controller.selection.mapping.findings import Exclusion, QualifiedValue, on_estimate, unusable
from controller.selection.mapping.prepared import Prepared
from controller.selection.mapping.relations import budget_ok, state_fits, tail_ok
from controller.selection.mapping.valuation import Measures, Reader
from controller.selection.mapping.values import satisfies
from controller.selection.mapping.view import Candidate
from controller.selection.mapping.vocabulary import (
    DETERMINISM_RANK,
    Element,
    Health,
    Reason,
    ValueCondition,
)
from controller.types import CsciId

FIT = "state_bytes <= hbm_free - weights_bytes"
TAIL = "wait_p + step_latency_p <= objective"
TIER = "tier-offered >= capability-tier"
WINDOW = "context-window >= context-length"


class _Checks:
    """The exclusions of one candidate, appended comparison by comparison.

    The text of a comparison (relation, required, observed) is built only when it fails, so
    an eligible candidate costs comparisons and no formatting.
    """

    __slots__ = ("csci_id", "estimates", "found")

    def __init__(self, csci_id: CsciId) -> None:
        self.csci_id = csci_id
        self.found: list[Exclusion] = []
        self.estimates: list[QualifiedValue] = []

    def compare(
        self,
        constraint: Element,
        condition: ValueCondition | None,
        verdict: tuple[bool | None, Reason],
        text: Callable[[], tuple[str, str, str]] | tuple[str, str, str],
    ) -> None:
        """Exclude on an unusable value, or when ``verdict`` (holds, reason) does not hold."""
        holds, reason = verdict
        if holds and condition is None:
            return
        if holds and condition is ValueCondition.ESTIMATED:
            self.estimates.append(on_estimate(self.csci_id, constraint))
            return
        comparison, required, observed = text if isinstance(text, tuple) else text()
        if holds is None or not satisfies(condition):
            relation = (comparison, required)
            if condition is None or satisfies(condition):  # no value, usable metadata
                condition = ValueCondition.UNKNOWN
            self.found.append(unusable(self.csci_id, constraint, condition, relation))
        else:
            self.found.append(
                Exclusion(self.csci_id, reason, constraint, comparison, required, observed)
            )


def _joined(values: Iterable[StrEnum | str]) -> str:
    return ",".join(sorted(str(value) for value in values))


def _instance(candidate: Candidate, prepared: Prepared, checks: _Checks) -> None:
    """Health, enablement and tenant (T7, M6)."""
    holds: bool | None
    if not candidate.enabled or candidate.view.health is Health.UNHEALTHY:
        state = "disabled" if not candidate.enabled else "unhealthy"
        checks.found.append(
            Exclusion(
                candidate.csci_id, Reason.INSTANCE_UNHEALTHY, Element.SERVICE_ID, "", "", state
            )
        )
    tenant = prepared.descriptor.tenant
    permitted = candidate.permitted_tenants
    if permitted:
        holds = tenant in permitted
        if not holds:
            checks.compare(
                Element.TENANT,
                None,
                (holds, Reason.TENANT_NOT_PERMITTED),
                lambda: ("tenant in permitted-tenant", tenant, _joined(permitted)),
            )


def _capability(candidate: Candidate, prepared: Prepared, reader: Reader, checks: _Checks) -> None:
    """Tier (never traded for distance), context window, model and mode (M2, M19)."""
    holds: bool | None
    descriptor = prepared.descriptor
    capability = candidate.view.capability
    condition = reader.condition(None if capability is None else capability.meta)
    tier = descriptor.capability_tier
    if tier is not None:
        offered = None if capability is None else prepared.tiers.rank(capability.tier_offered)
        required_rank = prepared.tier_rank
        holds = None if offered is None or required_rank is None else offered >= required_rank
        if not holds or condition is not None:
            checks.compare(
                Element.CAPABILITY_TIER,
                condition,
                (holds, Reason.CAPABILITY_TIER_BELOW_REQUIRED),
                lambda: (
                    TIER,
                    f"tier {tier}",
                    f"tier {capability.tier_offered}" if capability else "",
                ),
            )
    length = descriptor.context_length
    if length is not None:
        window = None if capability is None else capability.context_window
        holds = None if window is None else window >= length
        if not holds or condition is not None:
            checks.compare(
                Element.CONTEXT_LENGTH,
                condition,
                (holds, Reason.CONTEXT_WINDOW_TOO_SMALL),
                lambda: (WINDOW, f"{length} tokens", f"{window} tokens"),
            )
    model = descriptor.required_model
    if model is not None:
        holds = capability is not None and (
            model.name in (None, capability.model_name)
            and model.version in (None, capability.model_version)
            and model.adapters <= capability.adapters
        )
        holds = holds if capability is not None else None
        if not holds or condition is not None:
            checks.compare(
                Element.CAPABILITY_TIER,
                condition,
                (holds, Reason.MODEL_VERSION_NOT_OFFERED),
                lambda: (
                    "model, version and adapters offered",
                    f"{model.name} {model.version}",
                    ""
                    if capability is None
                    else f"{capability.model_name} {capability.model_version}",
                ),
            )
    mode = descriptor.mode
    if mode is not None:
        modes = frozenset() if capability is None else capability.modes
        holds = mode in modes if modes else None
        if not holds or condition is not None:
            checks.compare(
                Element.MODE,
                condition,
                (holds, Reason.MODE_NOT_SUPPORTED),
                lambda: ("mode in modes offered", mode.value, _joined(modes)),
            )


def _accelerator(
    candidate: Candidate, prepared: Prepared, measures: Measures, checks: _Checks
) -> None:
    """Precision (not traded for distance) and state_fits (6.7, 6.8 step 1, M50).

    'state_bytes' is what still has to be placed in accelerator memory: the context state a
    candidate already holds there is inside its hbm_free already, and resident weights are
    not counted twice (the example of 6.8 at C relies on this; see docs/requirements.md).
    """
    holds: bool | None
    accelerator = candidate.view.accelerator
    condition = measures.reader.condition(None if accelerator is None else accelerator.meta)
    required = prepared.descriptor.required_precision
    if required:
        offered = frozenset() if accelerator is None else accelerator.precisions
        holds = bool(required & offered) if offered else None
        if not holds or condition is not None:
            checks.compare(
                Element.REQUIRED_PRECISION,
                condition,
                (holds, Reason.PRECISION_NOT_SUPPORTED),
                lambda: (
                    "precision offered in required-precision",
                    _joined(required),
                    _joined(offered),
                ),
            )
    needed = measures.storage.needed_accelerator_bytes
    artifact = candidate.view.artifact
    resident = artifact is not None and artifact.resident is True
    if needed == 0 and resident:
        return
    weights = 0 if resident else (None if artifact is None else artifact.weights_bytes)
    free = None if accelerator is None else accelerator.memory_free
    if accelerator is not None and accelerator.memory_headroom is not None:
        free, weights = accelerator.memory_headroom, 0
    holds = None
    if needed is not None and weights is not None and free is not None:
        holds = state_fits(needed, free, weights)
    if not holds or condition is not None:
        checks.compare(
            Element.WORKING_SET,
            condition,
            (holds, Reason.MEMORY_DOES_NOT_FIT),
            lambda: (
                FIT,
                "unknown" if needed is None else f"{needed / 1e9:.2f} GB state",
                "" if free is None or weights is None else f"{(free - weights) / 1e9:.2f} GB free",
            ),
        )


def _locality(candidate: Candidate, prepared: Prepared, checks: _Checks) -> None:
    """The instance and a path to it inside the regions every element permits (M6, M28)."""
    holds: bool | None
    permitted = prepared.permitted_regions
    if permitted is None:
        return
    region = candidate.region
    holds = None if region is None else region in permitted
    if not holds:
        checks.compare(
            Element.LOCALITY,
            None,
            (holds, Reason.LOCALITY_NOT_PERMITTED),
            lambda: ("region in permitted-region", _joined(permitted), str(region)),
        )
    inside = any(p.regions and p.regions <= permitted for p in candidate.view.paths)
    if not inside:
        checks.compare(
            Element.LOCALITY,
            None,
            (inside, Reason.PATH_REGION_NOT_PERMITTED),
            lambda: (
                "path regions within permitted-region",
                _joined(permitted),
                "no path known to stay inside",
            ),
        )


def _forwarding(candidate: Candidate, prepared: Prepared, reader: Reader, checks: _Checks) -> None:
    """Determinism of a path and reachability of every required endpoint (6.3, M3)."""
    view = candidate.view
    required = prepared.descriptor.required_determinism
    if required is not None:
        wanted = DETERMINISM_RANK[required]
        offered = any(
            p.determinism is not None
            and DETERMINISM_RANK[p.determinism] >= wanted
            and satisfies(reader.condition(p.meta))
            for p in view.paths
        )
        if not offered:
            checks.compare(
                Element.PATH_SET,
                None,
                (offered, Reason.DETERMINISM_NOT_OFFERED),
                ("determinism >= required", required.value, ""),
            )
    for endpoint in prepared.required_endpoints:
        seen = view.endpoints.get(endpoint.prefix)
        condition = None
        if seen is not None and seen.cost is not None:
            condition = reader.condition(seen.cost.meta)
        reachable = None if seen is None else seen.reachable
        if not reachable or condition is not None:
            checks.compare(
                Element.ENDPOINT,
                condition,
                (reachable, Reason.ENDPOINT_UNREACHABLE),
                ("endpoint reachable", endpoint.prefix, "unreachable"),
            )


def _budgets(candidate: Candidate, prepared: Prepared, measures: Measures, checks: _Checks) -> None:
    """6.8 step 2 (state cost against the step budget) and step 4 (tail, session budget)."""
    holds: bool | None
    step_budget = prepared.step_time_budget
    cost = measures.storage.state_cost
    load = measures.artifact_load
    if step_budget is not None:
        holds = None if cost is None else cost <= step_budget
        if not holds:
            checks.compare(
                Element.BUDGET,
                None,
                (holds, Reason.STEP_BUDGET_EXCEEDED_BY_STATE_COST),
                lambda: ("state_cost <= step budget", f"{step_budget:.3f} s", f"{cost} s"),
            )
        if load is not None:
            holds = load <= step_budget
            if not holds:
                checks.compare(
                    Element.BUDGET,
                    None,
                    (holds, Reason.ARTIFACT_LOAD_EXCEEDS_STEP_BUDGET),
                    lambda: (
                        "artifact load <= step budget",
                        f"{step_budget:.3f} s",
                        f"{load:.3f} s",
                    ),
                )
    tail = prepared.tail_constraint
    if tail is not None:
        wait, latency = measures.wait, measures.latency
        condition = wait.condition if not satisfies(wait.condition) else latency.condition
        total = holds = None
        if wait.value is not None and latency.value is not None:
            total = wait.value + latency.value
            holds = tail_ok(wait.value, latency.value, tail.target)
        if not holds or condition is not None:
            checks.compare(
                Element.OBJECTIVE,
                condition,
                (holds, Reason.TAIL_OBJECTIVE_BREACHED),
                lambda: (TAIL, f"{tail.target:.3f} s at p{tail.percentile}", f"{total} s"),
            )
    remaining = prepared.session_time_remaining
    if remaining is not None and candidate.csci_id != prepared.current:
        change = None if load is None or cost is None else cost + load
        # the remaining budget already nets what the session has consumed
        holds = None if change is None else budget_ok(0.0, change, remaining)
        if not holds:
            checks.compare(
                Element.BUDGET,
                None,
                (holds, Reason.BUDGET_EXCEEDED),
                lambda: (
                    "session_cost + change_cost <= budget",
                    f"{remaining:.3f} s remaining",
                    f"{change} s change",
                ),
            )


def screen(
    candidate: Candidate, prepared: Prepared, measures: Measures
) -> tuple[list[Exclusion], list[QualifiedValue]]:
    """Every constraint a candidate fails, each with its reason code (P4; empty: eligible),
    and the constraints a fresh attributed estimate satisfied, to be reported (7.4)."""
    checks = _Checks(candidate.csci_id)
    _instance(candidate, prepared, checks)
    _capability(candidate, prepared, measures.reader, checks)
    _accelerator(candidate, prepared, measures, checks)
    _locality(candidate, prepared, checks)
    _forwarding(candidate, prepared, measures.reader, checks)
    checks.found.extend(measures.storage.exclusions)
    _budgets(candidate, prepared, measures, checks)
    return checks.found, checks.estimates
