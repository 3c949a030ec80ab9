"""The draft's worked examples as RFC 7951 members of the agent-selection RPCs and config.

The numbers are those of tests/unit/selection/mapping/test_worked_examples.py (the pure
core's), written as a gateway, a C-SMA and a C-NMA would send them: milliseconds, bytes,
date-and-time. ``now`` is the time the advertisements are stamped with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

Json = dict[str, Any]
AS = "ietf-cats-agent-selection"
GB = 1e9
TENANT = "tenant-1"
SERVICE = "agent"
WINDOW_MS = "60000"
RETRIEVAL = "192.0.2.0/24"


def iso(epoch: float) -> str:
    """yang:date-and-time of epoch seconds."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ms(seconds: float) -> str:
    """Seconds as a milliseconds decimal64."""
    return f"{seconds * 1000:.3f}"


def meta(now: float, source: str) -> Json:
    """Fresh, attributed, asserted metadata (freshness bound 10 min)."""
    return {"collected-at": iso(now), "freshness-bound": "600000", "source": source,
            "confidence": "asserted"}  # fmt: skip


def dist(p95: float, median: float | None = None) -> Json:
    """A latency-distribution with median and p95 over the 60 s window."""
    return {"median": ms(p95 / 2 if median is None else median), "p95": ms(p95),
            "window": WINDOW_MS}  # fmt: skip


@dataclass(frozen=True)
class Spec:
    """One candidate of an example (the knobs of the core tests' builder)."""

    csci_id: str
    tier: str = "capable"
    delay: float = 0.010
    bw: float = 2.5 * GB
    rtt: float = 0.008
    wait: float = 0.1
    latency: float = 0.5
    prefill: float = 10_000.0
    hbm_free: float = 40 * GB
    weights: float = 15.23 * GB
    free_capacity: float | None = None
    holds: tuple[str, ...] = ()
    service: str = SERVICE


CPS_LOGIN = ("cps", "cps-secret")  # how the C-PS logs in at the C-SMAs (SSH password)


def c_sma(port: int, name: str = "csma-1", login: tuple[str, str] = CPS_LOGIN) -> Json:
    """The ``c-sma`` container of a candidate: a C-SMA on loopback and the C-PS's login."""
    return {"name": name, "address": "127.0.0.1", "port": port, "username": login[0],
            "password": login[1]}  # fmt: skip


def config(
    specs: list[Spec], csma: int | Callable[[Spec], Json], context: Json | None = None
) -> Json:
    """agent-selection configuration: tiers, context, candidates behind one C-SMA (its
    NETCONF port) or behind the C-SMA that ``csma`` names for each."""
    route = (lambda _: c_sma(csma)) if isinstance(csma, int) else csma
    candidates = [
        {"csci-id": s.csci_id, "cs-id": s.service, "region": "R", "trusted": True,
         "c-sma": route(s)}
        for s in specs
    ]  # fmt: skip
    tiers = [{"name": "small", "rank": 1}, {"name": "capable", "rank": 2},
             {"name": "large", "rank": 3}]  # fmt: skip
    return {
        "capability-tiers": {"capability-tier": tiers},
        "selection-context": context or {},
        "candidates": {"candidate": candidates},
    }


CONTEXT_68: Json = {
    "stability": {"min-interval": "60000", "min-improvement": "0.05"},
    "look-ahead-horizon": 10,
}


def computing(spec: Spec, now: float) -> Json:
    """The computing container of one advertise-capability candidate."""
    m = meta(now, "c-sma-1")
    accelerator: Json = {"precision": [f"{AS}:bf16", f"{AS}:fp8"],
                         "memory-free": str(int(spec.hbm_free)), **m}  # fmt: skip
    if spec.free_capacity is not None:
        accelerator["free-capacity"] = f"{spec.free_capacity:.4f}"
    modes = ["request-response", "streaming", "tool-call", "fan-out"]
    return {
        "capability": {"tier-offered": spec.tier, "context-window": "200000",
                       "mode": [f"{AS}:{x}" for x in modes], **m},
        "accelerator": accelerator,
        "waiting-work": {"queue-delay": {**dist(spec.wait), **m}, **m},
        "token-rate": {"prefill-rate": f"{spec.prefill:.3f}", **m},
        "step-latency": {**dist(spec.latency), **m},
        "artifact": {"weights-bytes": str(int(spec.weights)), "resident": True,
                     "load-rate": "2000", **m},
    }  # fmt: skip


def capability(specs: list[Spec], now: float, sequence: int = 1) -> Json:
    """advertise-capability (MSG-4) of the C-SMA for every candidate."""
    return {"c-sma": "c-sma-1", "sequence-number": str(sequence),
            "candidate": [{"csci-id": s.csci_id, "computing": computing(s, now)}
                          for s in specs]}  # fmt: skip


def forwarding(specs: list[Spec], now: float, sequence: int = 1) -> Json:
    """advertise-forwarding-view (MSG-7): one path per candidate, p95 delay, median rtt."""
    m = meta(now, "c-nma-1")
    return {"c-nma": "c-nma-1", "sequence-number": str(sequence),
            "candidate": [{"csci-id": s.csci_id, "path-set": {"path": [
                {"path-id": "p1", "egress-capacity": str(int(s.bw)),
                 "delay": {**dist(s.delay, s.rtt), **m}, "region": ["R"], **m}]}}
                for s in specs]}  # fmt: skip


def element(key: str, cls: str, size: float, tokens: int, **extra: Any) -> Json:
    """A working-set element."""
    return {"reuse-key": key, "element-class": f"{AS}:{cls}", "element-size": str(int(size)),
            "tokens-to-reprocess": str(tokens), **extra}  # fmt: skip


def descriptor(
    session: str, step: int, elements: list[Json], service: str = SERVICE, **extra: Any
) -> Json:
    """A step descriptor of TENANT for ``service`` requiring tier 'capable'."""
    return {"service-id": service, "session-id": session, "tenant": TENANT, "turn-id": 1,
            "step-id": step, "capability-tier": "capable",
            "working-set": {"element": elements}, **extra}  # fmt: skip


# 8.4: A near but small; B holds documents, KV absent (0.6 s to recompute); C holds all.
KV = element("kv", "model-context-state", 0.33 * GB, 6_000)
DOCS = element("docs", "retrieved-material", 2e6, 1_000)
TWO_SECONDS: Json = {"quantity": f"{AS}:step-completion-time", "scope": "step",
                     "target": "2000", "percentile": "95", "window": WINDOW_MS}  # fmt: skip
LOCALITY: Json = {"element-class": f"{AS}:model-context-state", "permitted-region": ["R"]}


def example_84(c_forwarding: float) -> list[Spec]:
    """The candidates of 8.4 with C's extra forwarding."""
    return [
        Spec("A", tier="small", delay=0.002, holds=("kv", "docs")),
        Spec("B", delay=0.050, bw=0.25 * GB, holds=("docs",)),
        Spec("C", delay=0.050 + c_forwarding, holds=("kv", "docs")),
    ]


def descriptor_84(session: str, service: str = SERVICE) -> Json:
    """The step of 8.4."""
    return descriptor(session, 1, [KV, DOCS], service, objective=[TWO_SECONDS], locality=[LOCALITY])


# 6.8 step 30: C holds 7.5 GB of context; B would transfer it in 3.008 s.
CTX = element("ctx", "model-context-state", 7.5 * GB, 128_000)
DOC_SET = element("docs", "retrieved-material", 50e6, 2_000)


def example_68(b_delay: float, c_delay: float = 0.8) -> list[Spec]:
    """The candidates of 6.8."""
    return [
        Spec("B", delay=b_delay, prefill=1_000.0, hbm_free=24 * GB, holds=("docs",)),
        Spec("C", delay=c_delay, hbm_free=20 * GB, holds=("ctx", "docs")),
    ]


def descriptor_68(session: str, step: int, service: str = SERVICE) -> Json:
    """Steps 29/30 of 6.8 with 40 steps to go."""
    return descriptor(session, step, [CTX, DOC_SET], service,
                      **{"remaining-horizon": 40, "selection-context": CONTEXT_68})  # fmt: skip


# 8.4 step-30 episode: the retrieval tool overruns; the reduced retrieval set is applied.
PLAN = element("plan", "plan-scratch-state", 1e6, 4_000)
CORE_DOCS = element("docs-core", "retrieved-material", 5e6, 1_000)
EXTRA_DOCS = element("docs-extra", "retrieved-material", 45e6, 9_000, sufficient=False)


def episode() -> list[Spec]:
    """B reports more free capacity; C holds the whole working set."""
    return [
        Spec("B", delay=0.4, wait=0.10, free_capacity=0.6, prefill=1_000.0, hbm_free=24 * GB,
             holds=("docs-core", "docs-extra")),
        Spec("C", delay=0.4, wait=0.25, free_capacity=0.2, hbm_free=20 * GB,
             holds=("ctx", "docs-core", "docs-extra", "plan")),
    ]  # fmt: skip


def descriptor_episode(session: str, step: int, service: str = SERVICE) -> Json:
    """The step-30 descriptor: truncation of the working set permitted."""
    return descriptor(session, step, [CTX, CORE_DOCS, EXTRA_DOCS, PLAN], service,
                      **{"remaining-horizon": 40, "selection-context": CONTEXT_68,
                         "degradation": [f"{AS}:truncated-working-set"]})  # fmt: skip


def overrun(session: str, now: float) -> Json:
    """invalidation-notice: the retrieval call expected at 100 ms still running at 4 s."""
    return {"reporter": "ietf-cats-types:agent-gateway", "condition": f"{AS}:step-overrun",
            "session-id": session, "turn-id": 1, "step-id": 30, "at": iso(now),
            "step-progress": {"elapsed": "4000", "expected": "100", "endpoint": RETRIEVAL,
                              "remaining": "2000"}}  # fmt: skip


def holdings(specs: list[Spec]) -> list[tuple[str, str]]:
    """(csci-id, reuse-key) of every element a candidate holds."""
    return [(s.csci_id, key) for s in specs for key in s.holds]


def renamed(specs: list[Spec], prefix: str, service: str) -> list[Spec]:
    """The candidates of an example under their own names and service (one C-PS for all)."""
    return [replace(s, csci_id=f"{prefix}{s.csci_id}", service=service) for s in specs]
