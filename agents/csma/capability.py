"""MSG-4, capability and load advertisement by the C-SMA (agent-selection-mapping 7.2, 9.1).

What a C-SMA knows of each instance it answers for: from its configuration what the instance
offers (``[instances.capability]``: tier, context window, modes, precisions, prefill rate,
accelerator memory and free capacity, the model artifact, and where the operator states them
the queue delay and step latency distributions) and from its SCIs' reports how the instance
performs (the Computing Time of the instance's entry, as the step latency's mean: the SCI
measures a mean, never a tail, so no percentile is claimed). A stated step latency is
advertised instead of the measured mean: a mean never stands for the percentile an objective
asks for (7.5, M33), so replacing a stated p95 by it would only make the value unusable.
:func:`advertisement` builds the ``advertise-capability`` input; every part carries its
observation time, a freshness bound, the C-SMA as its source and a confidence (7.4):
configured values are ``asserted``, a measured step latency keeps the confidence of the
Computing Time it comes from. Pure: values in, JSON out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from agents.csma.values import Entry, EntryKey
from controller.types import CsciId, CsId, Json

MODULE = "ietf-cats-agent-selection"
OPERATION = "advertise-capability"


@dataclass(frozen=True, slots=True)
class Latency:
    """A stated latency distribution (``stated-latency``): milliseconds."""

    median: Decimal | None
    p95: Decimal | None
    window_ms: int = 60_000

    def json(self) -> Json:
        """The agent model's latency-distribution members."""
        return _some(
            (
                ("median", None if self.median is None else f"{self.median:.3f}"),
                ("p95", None if self.p95 is None else f"{self.p95:.3f}"),
                ("window", str(self.window_ms)),
            )
        )


@dataclass(frozen=True, slots=True)
class Capability:
    """``[instances.capability]``: what the instance offers, as its operator states it.

    Units as the module has them: tokens, tokens per second, bytes, megabytes per second.
    """

    tier: str | None = None
    context_window: int | None = None
    modes: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    prefill_rate: Decimal | None = None
    memory_free: int | None = None
    weights: int | None = None
    resident: bool = True
    load_rate: Decimal | None = None
    free_capacity: Decimal | None = None
    queue_delay: Latency | None = None
    step_latency: Latency | None = None


def _decimal(entry: Json, name: str) -> Decimal | None:
    value = entry.get(name)
    return None if value is None else Decimal(value)


def _integer(entry: Json, name: str) -> int | None:
    value = entry.get(name)
    return None if value is None else int(value)


def _latency(entry: Json, name: str) -> Latency | None:
    stated = entry.get(name)
    if stated is None:
        return None
    return Latency(_decimal(stated, "median"), _decimal(stated, "p95"), int(stated["window-ms"]))


def read_capability(entry: Json) -> Capability:
    """A validated ``capability`` container (cats-csma-config), defaults filled in."""
    return Capability(
        entry.get("tier"),
        _integer(entry, "context-window"),
        tuple(entry.get("modes", ())),
        tuple(entry.get("precisions", ())),
        _decimal(entry, "prefill-rate"),
        _integer(entry, "memory-free"),
        _integer(entry, "weights"),
        entry["resident"],
        _decimal(entry, "load-rate"),
        _decimal(entry, "free-capacity"),
        _latency(entry, "queue-delay"),
        _latency(entry, "step-latency"),
    )


@dataclass(frozen=True, slots=True)
class Advertised:
    """One instance the C-SMA advertises: its CSCI-ID, service and configured capability."""

    csci_id: CsciId
    cs_id: CsId
    capability: Capability | None


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _meta(now: float, source: str, bound_ms: int, confidence: str = "asserted") -> Json:
    return {
        "collected-at": _iso(now),
        "freshness-bound": str(bound_ms),
        "source": source,
        "confidence": confidence,
    }


def _some(pairs: Iterable[tuple[str, object]]) -> Json:
    return {name: value for name, value in pairs if value not in (None, [])}


def _configured(c: Capability, meta: Json) -> Json:
    """The parts of the computing view the operator configured (each with its metadata)."""
    parts: dict[str, Json] = {
        "capability": _some(
            (
                ("tier-offered", c.tier),
                ("context-window", None if c.context_window is None else str(c.context_window)),
                ("mode", [f"{MODULE}:{m}" for m in c.modes]),
            )
        ),
        "accelerator": _some(
            (
                ("precision", [f"{MODULE}:{p}" for p in c.precisions]),
                ("memory-free", None if c.memory_free is None else str(c.memory_free)),
                ("free-capacity", None if c.free_capacity is None else f"{c.free_capacity:.4f}"),
            )
        ),
        "waiting-work": _some(
            (("queue-delay", None if c.queue_delay is None else {**c.queue_delay.json(), **meta}),)
        ),
        "token-rate": _some(
            (("prefill-rate", None if c.prefill_rate is None else f"{c.prefill_rate:.3f}"),)
        ),
        "artifact": _some(
            (
                ("weights-bytes", None if c.weights is None else str(c.weights)),
                ("resident", c.resident if c.weights is not None else None),
                ("load-rate", None if c.load_rate is None else f"{c.load_rate:.3f}"),
            )
        ),
        "step-latency": {} if c.step_latency is None else c.step_latency.json(),
    }
    return {name: {**part, **meta} for name, part in parts.items() if part}


def _measured(entry: Entry, now: float, source: str, bound_ms: int) -> Json:
    """The step latency of the instance's entry: the SCI's Computing Time as a mean."""
    meta = _meta(now, source, bound_ms, entry.confidence.value)
    return {"step-latency": {"mean": f"{entry.computing_time:.3f}", **meta}}


def advertisement(
    name: str,
    instances: Iterable[Advertised],
    entries: Mapping[EntryKey, Entry],
    now: float,
    bound_ms: int,
) -> Json | None:
    """The advertise-capability input (without its sequence number) for the instances the
    C-SMA knows anything of, None when it knows nothing yet."""
    candidates: list[Json] = []
    for instance in instances:
        computing: Json = {}
        if instance.capability is not None:
            computing.update(_configured(instance.capability, _meta(now, name, bound_ms)))
        entry = entries.get((instance.cs_id, instance.csci_id))
        if entry is not None and entry.gas > 0 and "step-latency" not in computing:
            computing.update(_measured(entry, now, name, bound_ms))
        if computing:
            candidates.append({"csci-id": instance.csci_id, "computing": computing})
    if not candidates:
        return None
    return {"c-sma": name, "candidate": candidates}
