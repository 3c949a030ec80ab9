"""MSG-4, MSG-6 and MSG-7 members to the core's resource view of a candidate (6.3, 7.2).

An advertisement is parsed once, when it arrives (:func:`computing`, :func:`forwarding`);
a decision composes the parts with the session's state elements (:func:`state_elements`,
from query-state) into one :class:`ResourceView` per candidate (:func:`view`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.agent_selection.values import ident, instant, integer, metadata, number, seconds
from controller.selection.mapping import (
    Accelerator,
    Artifact,
    Capability,
    Distribution,
    EndpointCost,
    Metadata,
    PathView,
    ResourceView,
    StateElementView,
    TokenRate,
    TransferWindow,
)
from controller.selection.mapping.vocabulary import (
    CommunicationMode,
    DeterminismClass,
    ElementClass,
    Health,
    Precision,
    Presence,
    ResidencyTier,
)
from controller.types import Prefix, RegionId, ReuseKey, TenantId, TierName

MB = 1e6
STAY_IN_PLACE = "stay-in-place"


@dataclass(frozen=True, slots=True)
class ComputingPart:
    """The computing dimension of one candidate, as its C-SMA last advertised it (MSG-4)."""

    capability: Capability | None = None
    accelerator: Accelerator | None = None
    queue_delay: Distribution | None = None
    token_rate: TokenRate | None = None
    step_latency: Distribution | None = None
    artifact: Artifact | None = None
    health: Health | None = None


@dataclass(frozen=True, slots=True)
class ForwardingPart:
    """The forwarding dimension of one candidate, as the C-NMA last advertised it (MSG-7)."""

    paths: tuple[PathView, ...] = ()
    endpoints: Mapping[Prefix, EndpointCost] | None = None
    transfer_window: TransferWindow | None = None


def distribution(
    doc: Mapping[str, Any] | None, meta: Metadata | None = None
) -> Distribution | None:
    """A latency-distribution: median and p95 are ranks 50 and 95; a mean says it is one."""
    if not doc:
        return None
    ranks: dict[float, float] = {}
    for rank, name in ((50.0, "median"), (95.0, "p95")):
        value = seconds(doc.get(name))
        if value is not None:
            ranks[rank] = value
    for entry in doc.get("percentile", ()):
        ranks[float(str(entry["rank"]))] = seconds(entry["value"]) or 0.0
    own = metadata(doc) if "collected-at" in doc or meta is None else meta
    count = integer(doc.get("sample-count"))
    return Distribution(
        tuple(sorted(ranks.items())),
        own,
        seconds(doc.get("window")),
        seconds(doc.get("mean")),
        count,
    )


def _capability(doc: Mapping[str, Any] | None) -> Capability | None:
    if doc is None:
        return None
    model = doc.get("model", {})
    tier = doc.get("tier-offered")
    return Capability(
        metadata(doc),
        None if tier is None else TierName(str(tier)),
        integer(doc.get("context-window")),
        model.get("name"),
        model.get("version"),
        frozenset(str(a) for a in model.get("adapter", ())),
        frozenset(CommunicationMode(ident(m)) for m in doc.get("mode", ())),
    )


def _accelerator(doc: Mapping[str, Any] | None) -> Accelerator | None:
    if doc is None:
        return None
    return Accelerator(
        metadata(doc),
        frozenset(Precision(ident(p)) for p in doc.get("precision", ())),
        integer(doc.get("memory-free")),
        integer(doc.get("memory-headroom")),
        number(doc.get("free-capacity")),
    )


def computing(doc: Mapping[str, Any]) -> ComputingPart:
    """The ``computing`` container of an advertise-capability candidate."""
    waiting = doc.get("waiting-work")
    rate = doc.get("token-rate")
    artifact = doc.get("artifact")
    health = doc.get("health")
    load = number(artifact.get("load-rate")) if artifact else None
    return ComputingPart(
        _capability(doc.get("capability")),
        _accelerator(doc.get("accelerator")),
        distribution(waiting.get("queue-delay"), metadata(waiting)) if waiting else None,
        None
        if rate is None
        else TokenRate(
            metadata(rate), number(rate.get("prefill-rate")), number(rate.get("decode-rate"))
        ),
        distribution(doc.get("step-latency")),
        None
        if artifact is None
        else Artifact(
            metadata(artifact),
            integer(artifact.get("weights-bytes")),
            artifact.get("resident"),
            None if load is None else load * MB,
            seconds(artifact.get("registry-rtt")),
        ),
        None if health is None or "status" not in health else Health(ident(health["status"])),
    )


def _path(doc: Mapping[str, Any]) -> PathView:
    determinism = doc.get("determinism")
    meta = metadata(doc)
    return PathView(
        str(doc["path-id"]),
        meta,
        number(doc.get("egress-capacity")),
        distribution(doc.get("delay"), meta),
        None if determinism is None else DeterminismClass(ident(determinism)),
        frozenset(RegionId(str(r)) for r in doc.get("region", ())),
    )


def forwarding(doc: Mapping[str, Any]) -> ForwardingPart:
    """The path-set, endpoint-cost and transfer-window of an advertise-forwarding-view
    candidate (MSG-7); the endpoints are extended, not replaced, by later views (9.1)."""
    endpoints = {
        Prefix(str(e["prefix"])): EndpointCost(
            Prefix(str(e["prefix"])), e.get("reachable"), distribution(e)
        )
        for e in doc.get("endpoint-cost", {}).get("endpoint", ())
    }
    window = doc.get("transfer-window")
    return ForwardingPart(
        tuple(_path(p) for p in doc.get("path-set", {}).get("path", ())),
        endpoints or None,
        None
        if window is None
        else TransferWindow(
            metadata(window),
            instant(window.get("start-not-before")),
            instant(window.get("start-not-after")),
        ),
    )


def merged(old: ForwardingPart | None, new: ForwardingPart) -> ForwardingPart:
    """A later forwarding view over an earlier one: endpoints accumulate (MSG-7)."""
    if old is None or not old.endpoints:
        return new
    endpoints = dict(old.endpoints)
    endpoints.update(new.endpoints or {})
    paths = new.paths or old.paths
    window = new.transfer_window or old.transfer_window
    return ForwardingPart(paths, endpoints, window)


def state_element(doc: Mapping[str, Any]) -> StateElementView:
    """One element of a query-state reply (MSG-6); a key it cannot answer is unknown."""
    residency = doc.get("residency")
    cls = doc.get("element-class")
    governance = doc.get("governance", {})
    constraints = {ident(c) for c in governance.get("constraint", ())}
    retention = number(doc.get("retention"))
    return StateElementView(
        Presence(str(doc.get("presence", "unknown"))),
        metadata(doc),
        None if residency is None else ResidencyTier(ident(residency)),
        None if cls is None else ElementClass(ident(cls)),
        integer(doc.get("element-size")),
        seconds(doc.get("retrieval-cost")),
        seconds(doc.get("recompute-cost")),
        seconds(doc.get("state-age")),
        retention,
        may_not_move=STAY_IN_PLACE in constraints,
        permitted_regions=frozenset(
            RegionId(str(r)) for r in governance.get("permitted-region", ())
        ),
    )


def state_elements(
    tenant: TenantId, elements: list[Mapping[str, Any]]
) -> dict[tuple[TenantId, ReuseKey], StateElementView]:
    """The state entries of one candidate for one tenant (keys are scoped to it, 15)."""
    return {(tenant, ReuseKey(str(e["reuse-key"]))): state_element(e) for e in elements}


def view(
    compute: ComputingPart | None,
    forward: ForwardingPart | None,
    state: Mapping[tuple[TenantId, ReuseKey], StateElementView],
) -> ResourceView:
    """The three-dimensional view of one candidate for one decision (6.3)."""
    c = compute or ComputingPart()
    f = forward or ForwardingPart()
    return ResourceView(
        paths=f.paths,
        endpoints=f.endpoints or {},
        transfer_window=f.transfer_window,
        capability=c.capability,
        accelerator=c.accelerator,
        queue_delay=c.queue_delay,
        token_rate=c.token_rate,
        step_latency=c.step_latency,
        artifact=c.artifact,
        health=c.health,
        state=state,
    )
