"""What the C-PS holds of each instance, in the selection core's own types.

The CST entry (service-metrics-op 6.2.1) from an instance's last report, the NST entries
(6.2.2) from the topology's delays, and the agent-selection resource view (agent draft 6.3,
7.2) from the same report and the C-SMA's view of the instance's KV cache: every cached block
is a working-set element present in accelerator memory (MSG-6), under the service's tenant.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, ValuesView
from typing import Any

from controller.evaluate.cache import CacheMirror
from controller.evaluate.reporting import Sample
from controller.evaluate.topology import Instance, Topology
from controller.selection.joint import CstEntry, NstEntry, from_us
from controller.selection.joint.vocabulary import Metric
from controller.selection.mapping import (
    Accelerator,
    Artifact,
    Distribution,
    Metadata,
    PathView,
    ResourceView,
    StateElementView,
    TokenRate,
)
from controller.selection.mapping.vocabulary import ElementClass, Health, Presence, ResidencyTier
from controller.types import CsciId, CsId, ForwarderId, ReuseKey, SourceId, TenantId

SERVICE = CsId("llm")
TENANT = TenantId("llm-users")
Key = tuple[TenantId, ReuseKey]


_KEYS: dict[int, Key] = {}
_BLOCKS: dict[Key, int] = {}


def key(block: int) -> Key:
    """The working-set element of a KV-cache block: its hash is its reuse key."""
    found = _KEYS.get(block)
    if found is None:
        found = _KEYS[block] = (TENANT, ReuseKey(str(block)))
        _BLOCKS[found] = block
    return found


class HeldBlocks(Mapping[Key, StateElementView]):
    """The C-SMA's state view of one instance: every block it holds, present in accelerator
    memory. Immutable; every key maps to the same element view, which ``values`` yields once.
    """

    __slots__ = ("_blocks", "_view")

    def __init__(self, blocks: frozenset[int], view: StateElementView) -> None:
        self._blocks = blocks
        self._view = view

    def __getitem__(self, item: Key) -> StateElementView:
        if _BLOCKS.get(item) in self._blocks:
            return self._view
        raise KeyError(item)

    def get(self, item: Key, default: Any = None) -> Any:
        """The element view of a held key, else ``default`` (without raising)."""
        return self._view if _BLOCKS.get(item) in self._blocks else default

    def __contains__(self, item: object) -> bool:
        return _BLOCKS.get(item) in self._blocks  # type: ignore[call-overload]

    def __iter__(self) -> Iterator[Key]:
        return map(key, self._blocks)

    def __len__(self) -> int:
        return len(self._blocks)

    def values(self) -> ValuesView[StateElementView]:
        """The one element view every key maps to."""
        return ({0: self._view} if self._blocks else {}).values()


def csci(instance: Instance) -> CsciId:
    """The CSCI-ID of an instance."""
    return CsciId(instance.name)


def cst_entry(instance: Instance, sample: Sample, estimate: float, expiry: float) -> CstEntry:
    """The CST entry of an instance from its last report (the C-SMA's estimate when nothing
    was measured yet, marked estimated), alive until ``expiry``."""
    measured = sample.computing_time
    value = estimate if measured is None else measured
    return CstEntry(
        SERVICE,
        csci(instance),
        sample.gas,
        from_us(round(value * 1e6)),
        sample.at,
        expiry,
        egress=ForwarderId(instance.site),
        site=instance.site,
        region=instance.region,
        estimated=(Metric.COMPUTING_TIME,) if measured is None else (),
    )


def nst(topology: Topology, now: float) -> list[NstEntry]:
    """Every (ingress, site egress) path with its round-trip time, as the C-NMA reports it."""
    sites = {i.site: i.region for i in topology.instances}
    return [
        NstEntry(
            ForwarderId(ingress.name),
            ForwarderId(site),
            from_us(round(topology.rtt(ingress.region, region) * 1e6)),
            now,
        )
        for ingress in topology.ingresses
        for site, region in sites.items()
    ]


def _flat(value: float, meta: Metadata) -> Distribution:
    return Distribution(((50.0, value), (95.0, value)), meta)


def resource_view(
    instance: Instance,
    sample: tuple[Sample, float],
    state: CacheMirror,
    topology: Topology,
    freshness: float,
) -> ResourceView:
    """The resource view of an instance without its paths (they depend on the ingress):
    the values of its last report (collected then, and vouched for by the C-SMA's heartbeats
    until ``asserted``: their freshness bound runs from there), and the blocks of the C-SMA's
    state view ``state``."""
    values, asserted = sample
    synced = state.as_of
    if state.frozen is None or state.frozen[0] != state.version:
        state.frozen = (state.version, frozenset(state.blocks))
    source = SourceId(f"c-sma-{instance.site}")
    reported = Metadata(values.at, asserted - values.at + freshness, source)
    static = Metadata(synced, math.inf, source)
    held = Metadata(synced, freshness, source)
    kv_bytes = instance.spec.kv_blocks * topology.block_bytes
    element = StateElementView(
        Presence.PRESENT,
        held,
        ResidencyTier.ACCELERATOR_MEMORY,
        ElementClass.MODEL_CONTEXT_STATE,
    )
    return ResourceView(
        accelerator=Accelerator(static, memory_free=kv_bytes, memory_headroom=kv_bytes),
        queue_delay=_flat(values.waiting, reported),
        token_rate=TokenRate(static, instance.spec.prefill_rate, instance.spec.decode_rate),
        step_latency=_flat(0.0, static),
        artifact=Artifact(static, resident=True),
        health=Health.HEALTHY,
        state=HeldBlocks(state.frozen[1], element),
    )


def path(topology: Topology, ingress: int, instance: Instance) -> PathView:
    """The path from an ingress to an instance's site (C-NMA, MSG-7); no bulk-transfer
    capacity is advertised."""
    meta = Metadata(0.0, math.inf, SourceId("c-nma"))
    region = topology.ingresses[ingress].region
    rtt = topology.rtt(region, instance.region)
    return PathView(
        f"{topology.ingresses[ingress].name}>{instance.site}", meta, None, _flat(rtt, meta)
    )
