"""Layer 2, the resource view of a candidate over forwarding, computing and storage (6.3, 7.2).

Quantities observed together share one :class:`Metadata`, as the YANG entries group them;
sizes are bytes, rates bytes/s or tokens/s, times seconds (the units of :data:`INVENTORY`).
An absent group or field is unknown (7.5).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from controller.selection.mapping.values import Distribution, Metadata, Unit
from controller.selection.mapping.vocabulary import (
    CommunicationMode,
    DeterminismClass,
    Dimension,
    ElementClass,
    Health,
    Precision,
    Presence,
    ResidencyTier,
)
from controller.selection.units import Timestamp
from controller.types import CsciId, Prefix, RegionId, ReuseKey, TenantId, TierName


@dataclass(frozen=True, slots=True)
class PathView:
    """One path towards the instance (7.2 path-set); ``egress_capacity`` is 'bw' in bytes/s,
    the median of ``delay`` is 'rtt'. Empty ``regions``: the regions traversed are unknown."""

    path_id: str
    meta: Metadata
    egress_capacity: float | None = None
    delay: Distribution | None = None
    determinism: DeterminismClass | None = None
    regions: frozenset[RegionId] = frozenset()


@dataclass(frozen=True, slots=True)
class EndpointCost:
    """endpoint-cost towards one prefix from the instance; ``reachable`` None is unknown."""

    prefix: Prefix
    reachable: bool | None
    cost: Distribution | None = None


@dataclass(frozen=True, slots=True)
class TransferWindow:
    """transfer-window: when a bulk transfer towards the candidate may start (7.2)."""

    meta: Metadata
    start_not_before: Timestamp | None = None
    start_not_after: Timestamp | None = None

    def open_at(self, now: Timestamp) -> bool:
        """Whether a transfer may start at ``now``."""
        after_start = self.start_not_before is None or now >= self.start_not_before
        before_end = self.start_not_after is None or now <= self.start_not_after
        return after_start and before_end


@dataclass(frozen=True, slots=True)
class Capability:
    """Capability elements observed together: tier-offered, context window, model, modes."""

    meta: Metadata
    tier_offered: TierName | None = None
    context_window: int | None = None
    model_name: str | None = None
    model_version: str | None = None
    adapters: frozenset[str] = frozenset()
    modes: frozenset[CommunicationMode] = frozenset()


@dataclass(frozen=True, slots=True)
class Accelerator:
    """Accelerator precision set and memory: ``memory_free`` is 'hbm_free'; ``memory_headroom``
    is the memory free after the weights of the artifact the step needs."""

    meta: Metadata
    precisions: frozenset[Precision] = frozenset()
    memory_free: int | None = None
    memory_headroom: int | None = None
    free_capacity: float | None = None


@dataclass(frozen=True, slots=True)
class TokenRate:
    """Prefill and decode rate available to a new step, tokens/s ('prefill_rate')."""

    meta: Metadata
    prefill_rate: float | None = None
    decode_rate: float | None = None


@dataclass(frozen=True, slots=True)
class Artifact:
    """The model artifact: 'weights_bytes', whether resident, and its load rate (bytes/s)."""

    meta: Metadata
    weights_bytes: int | None = None
    resident: bool | None = None
    load_rate: float | None = None
    registry_rtt: float | None = None


@dataclass(frozen=True, slots=True)
class StateElementView:
    """One working set element at the instance (MSG-6; 7.2 presence .. governance).

    A key the instance cannot answer for is UNKNOWN, never ABSENT. ``may_not_move`` reflects a
    'stay-in-place' governance constraint on the copy held here.
    """

    presence: Presence
    meta: Metadata
    residency: ResidencyTier | None = None
    element_class: ElementClass | None = None
    element_size: int | None = None
    retrieval_cost: float | None = None
    recompute_cost: float | None = None
    state_age: float | None = None
    retention: float | None = None
    may_not_move: bool = False
    permitted_regions: frozenset[RegionId] = frozenset()


_EMPTY_STATE: Mapping[tuple[TenantId, ReuseKey], StateElementView] = MappingProxyType({})
_EMPTY_ENDPOINTS: Mapping[Prefix, EndpointCost] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ResourceView:
    """The three-dimensional view of one candidate (6.3); ``state`` is keyed by
    (tenant, reuse key) because reuse keys are scoped to their tenant (15)."""

    paths: tuple[PathView, ...] = ()
    endpoints: Mapping[Prefix, EndpointCost] = field(default_factory=lambda: _EMPTY_ENDPOINTS)
    transfer_window: TransferWindow | None = None
    capability: Capability | None = None
    accelerator: Accelerator | None = None
    queue_delay: Distribution | None = None
    token_rate: TokenRate | None = None
    step_latency: Distribution | None = None
    artifact: Artifact | None = None
    health: Health | None = None
    state: Mapping[tuple[TenantId, ReuseKey], StateElementView] = field(
        default_factory=lambda: _EMPTY_STATE
    )
    fresh_until: float = field(init=False, repr=False, compare=False)
    oldest: float = field(init=False, repr=False, compare=False)
    state_fresh_until: float = field(init=False, repr=False, compare=False)
    _reported: tuple[tuple[tuple[TenantId, ReuseKey], StateElementView], ...] | None = field(
        init=False, default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        """Summarize the metadata of every group once per view, not once per decision."""
        metas = list(group_metas(self))
        clean = all(meta.clean for meta in metas)
        until = min((meta.expires_at for meta in metas), default=math.inf)
        oldest = min(
            (-math.inf if m.collected_at is None else m.collected_at for m in metas),
            default=math.inf,
        )
        object.__setattr__(self, "fresh_until", until if clean else -math.inf)
        object.__setattr__(self, "oldest", oldest)
        # Until when every copy reported present or unknown is fresh and clean; an absent
        # copy is simply absent whatever its report says (MSG-6), so it does not stop the
        # others being read at once. Read from the distinct element views: a state map that
        # shares one view among many keys (a C-SMA's view of a KV cache) costs one per view.
        state = [seen.meta for seen in self.state.values() if seen.presence is not Presence.ABSENT]
        state_until = min((meta.expires_at for meta in state), default=math.inf)
        state_clean = all(meta.clean for meta in state)
        object.__setattr__(self, "state_fresh_until", state_until if state_clean else -math.inf)

    @property
    def reported(self) -> tuple[tuple[tuple[TenantId, ReuseKey], StateElementView], ...]:
        """The copies reported present or unknown, set apart from the absent ones once per
        view, when a decision first walks the state (:func:`scan.scan` walks the smaller
        of the state and the working set)."""
        if self._reported is None:
            held = tuple(
                item for item in self.state.items() if item[1].presence is not Presence.ABSENT
            )
            object.__setattr__(self, "_reported", held)
            return held
        return self._reported

    def fresh(self, now: Timestamp, max_age: float | None) -> bool:
        """Every group of the view is fresh, attributed and asserted at ``now`` (7.5); the
        per-value checks can then be skipped. State elements are checked one by one."""
        if now > self.fresh_until:
            return False
        return max_age is None or now - self.oldest <= max_age


def group_metas(view: ResourceView) -> Iterator[Metadata]:
    """The metadata of every group of the view (its state elements aside)."""
    for path in view.paths:
        yield path.meta
        if path.delay is not None:
            yield path.delay.meta
    for cost in view.endpoints.values():
        if cost.cost is not None:
            yield cost.cost.meta
    groups = (
        view.transfer_window,
        view.capability,
        view.accelerator,
        view.token_rate,
        view.artifact,
        view.queue_delay,
        view.step_latency,
    )
    for group in groups:
        if group is not None:
            yield group.meta


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate: a service contact instance and the paths towards it (6.3).

    ``permitted_tenants`` empty: every tenant. ``trusted`` False: the values its own C-SMA
    supplies never dominate the combination (14).
    """

    csci_id: CsciId
    view: ResourceView
    region: RegionId | None = None
    permitted_tenants: frozenset[TenantId] = frozenset()
    trusted: bool = False
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class InventoryEntry:
    """One resource of Table 4: the dimensions, the unit and the observing component (M48)."""

    dimensions: tuple[Dimension, ...]
    unit: Unit
    observed_by: str


_T, _C, _S = Dimension.FORWARDING, Dimension.COMPUTING, Dimension.STORAGE
INVENTORY: Mapping[str, InventoryEntry] = MappingProxyType(
    {
        "path-egress-capacity": InventoryEntry((_T,), Unit.BYTES_PER_SECOND, "c-nma"),
        "path-delay-and-jitter": InventoryEntry((_T,), Unit.SECONDS, "c-nma"),
        "endpoint-cost": InventoryEntry((_T,), Unit.SECONDS, "c-nma"),
        "transfer-window": InventoryEntry((_T,), Unit.SECONDS, "operator"),
        "accelerator-memory-free": InventoryEntry((_C, _S), Unit.BYTES, "c-sma"),
        "host-memory-free": InventoryEntry((_S,), Unit.BYTES, "c-sma"),
        "local-persistent-store": InventoryEntry((_S,), Unit.BYTES_PER_SECOND, "c-sma"),
        "remote-state-store": InventoryEntry((_S,), Unit.SECONDS, "c-sma"),
        "state-residency": InventoryEntry((_S,), Unit.BYTES, "c-sma"),
        "state-retention": InventoryEntry((_S,), Unit.SECONDS, "c-sma"),
        "accelerator-capability": InventoryEntry((_C,), Unit.FRACTION, "c-sma"),
        "waiting-work": InventoryEntry((_C,), Unit.SECONDS, "c-sma"),
        "prefill-and-decode-rate": InventoryEntry((_C,), Unit.TOKENS_PER_SECOND, "c-sma"),
        "context-window": InventoryEntry((_C,), Unit.TOKENS, "c-sma"),
        "artifact-locality": InventoryEntry((_C, _S), Unit.BYTES_PER_SECOND, "c-sma"),
        "model-artifact-size": InventoryEntry((_C, _S), Unit.BYTES, "c-sma"),
    }
)
"""The resource inventory of 6.7 Table 4 with the unit each is compared in here (M48)."""
