"""Small builders for descriptors, candidates and contexts at a fixed time (seconds)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.selection.mapping import (
    Accelerator,
    Artifact,
    Candidate,
    Capability,
    Descriptor,
    Distribution,
    EndpointCost,
    Evaluation,
    EvaluationRequest,
    Metadata,
    PathView,
    Policy,
    ResourceView,
    SelectionContext,
    SessionPosition,
    StateElementView,
    TierCatalogue,
    TokenRate,
    WorkingSetElement,
    evaluate,
)
from controller.selection.mapping.vocabulary import (
    CommunicationMode,
    Confidence,
    ElementClass,
    Precision,
    Presence,
    ResidencyTier,
)
from controller.types import (
    CsciId,
    CsId,
    Prefix,
    RegionId,
    ReuseKey,
    SessionId,
    SourceId,
    TenantId,
    TierName,
)

NOW = 10_000.0
WINDOW = 60.0
GB = 1e9
TENANT = TenantId("tenant-1")
SESSION = SessionId("s-1")
R = RegionId("R")
TIERS = TierCatalogue({TierName("small"): 1, TierName("capable"): 2, TierName("large"): 3})


def meta(
    age: float = 0.0,
    bound: float = 30.0,
    source: str | None = "c-sma-1",
    confidence: Confidence = Confidence.ASSERTED,
) -> Metadata:
    """Metadata of a value observed ``age`` seconds before NOW."""
    return Metadata(NOW - age, bound, None if source is None else SourceId(source), confidence)


def dist(p95: float, median: float | None = None, **extra: Any) -> Distribution:
    """A distribution with p95 (and median, default p95 / 2) over WINDOW, observed at NOW."""
    values = ((50.0, p95 / 2 if median is None else median), (95.0, p95))
    window = extra.pop("window", WINDOW)
    metadata = extra.pop("meta", meta())
    return Distribution(values, metadata, window, **extra)


def element(
    key: str,
    cls: ElementClass = ElementClass.MODEL_CONTEXT_STATE,
    size: float | None = None,
    tokens: int | None = None,
    **extra: Any,
) -> WorkingSetElement:
    """A working-set element."""
    return WorkingSetElement(
        ReuseKey(key),
        cls,
        None if size is None else int(size),
        tokens,
        **extra,
    )


def held(
    *keys: str,
    residency: ResidencyTier = ResidencyTier.ACCELERATOR_MEMORY,
    presence: Presence = Presence.PRESENT,
    **extra: Any,
) -> dict[tuple[TenantId, ReuseKey], StateElementView]:
    """State entries of TENANT for ``keys``."""
    view = StateElementView(
        presence,
        extra.pop("meta", meta()),
        residency if presence is Presence.PRESENT else None,
        **extra,
    )
    return {(TENANT, ReuseKey(key)): view for key in keys}


def candidate(  # noqa: PLR0913 - a builder with every knob of the view
    csci: str,
    *,
    region: str | None = "R",
    tier: str | None = "capable",
    delay: float = 0.010,
    bw: float | None = 2.5 * GB,
    rtt: float = 0.008,
    wait: float = 0.1,
    latency: float = 0.5,
    prefill: float | None = 10_000.0,
    hbm_free: float = 40 * GB,
    weights: float = 15.23 * GB,
    resident: bool = True,
    state: Mapping[tuple[TenantId, ReuseKey], StateElementView] | None = None,
    endpoints: Mapping[Prefix, EndpointCost] | None = None,
    trusted: bool = True,
    precisions: frozenset[Precision] = frozenset({Precision.BF16, Precision.FP8}),
    context_window: int = 200_000,
    capability_meta: Metadata | None = None,
    computing: tuple[Distribution | None, Distribution | None] | None = None,
    free_capacity: float | None = None,
) -> Candidate:
    """A candidate whose path delay p95 is ``delay`` and median ``rtt``."""
    regions = frozenset() if region is None else frozenset({RegionId(region)})
    path = PathView("p1", meta(source="c-nma-1"), bw, dist(delay, rtt), None, regions)
    queue, step = computing if computing is not None else (dist(wait), dist(latency))
    view = ResourceView(
        paths=(path,),
        endpoints=dict(endpoints or {}),
        capability=Capability(
            capability_meta or meta(),
            None if tier is None else TierName(tier),
            context_window,
            modes=frozenset(CommunicationMode),
        ),
        accelerator=Accelerator(meta(), precisions, int(hbm_free), free_capacity=free_capacity),
        queue_delay=queue,
        token_rate=TokenRate(meta(), prefill),
        step_latency=step,
        artifact=Artifact(meta(), int(weights), resident, load_rate=2 * GB),
        state=state or {},
    )
    return Candidate(
        CsciId(csci), view, None if region is None else RegionId(region), trusted=trusted
    )


def descriptor(**extra: Any) -> Descriptor:
    """A step descriptor of SESSION under TENANT requiring tier 'capable'."""
    values: dict[str, Any] = {"capability_tier": TierName("capable"), "step_id": 1}
    values.update(extra)
    return Descriptor(CsId("agent"), SESSION, TENANT, **values)


def run(
    desc: Descriptor,
    candidates: list[Candidate],
    context: SelectionContext | None = None,
    position: SessionPosition | None = None,
    **extra: Any,
) -> Evaluation:
    """evaluate() at NOW with TIERS."""
    request = EvaluationRequest(desc, position or SessionPosition(), **extra)
    policy = Policy(context or SelectionContext(), TIERS)
    return evaluate(request, candidates, policy, NOW)
