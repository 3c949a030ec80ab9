"""The agent draft's candidates with the draft's numbers, as the messages that describe them:
the C-PS's ``agent-selection`` configuration, advertise-capability (MSG-4, as a C-SMA sends
it) and advertise-forwarding-view (MSG-7, as a C-NMA sends it), RFC 7951 members; and the
``capability`` a ``catsctl csma`` is configured with (cats-csma-config) so that it advertises
the same computing view itself (:func:`stated_capability`).

Milliseconds, bytes and date-and-time as the model has them; ``now`` is the time the
advertisements are stamped with. Stage G of the demo plays the step-30 episode of
agent-selection-mapping 8.4 (:func:`episode`) with them; the tests' worked examples
(tests/unit/agent_selection/drafts.py) are built on the same builders.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from controller.types import Json

AS = "ietf-cats-agent-selection"
GB = 1e9
TENANT = "tenant-1"
SERVICE = "agent"
WINDOW_MS = "60000"
C_SMA = "c-sma-1"  # the default source of the computing values
C_NMA = "c-nma-1"  # the default source of the forwarding values


def iso(epoch: float) -> str:
    """yang:date-and-time of epoch seconds."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ms(seconds: float) -> str:
    """Seconds as a milliseconds decimal64."""
    return f"{seconds * 1000:.3f}"


def meta(now: float, source: str) -> Json:
    """Fresh, attributed, asserted metadata (freshness bound 10 min)."""
    return {
        "collected-at": iso(now),
        "freshness-bound": "600000",
        "source": source,
        "confidence": "asserted",
    }


def dist(p95: float, median: float | None = None) -> Json:
    """A latency-distribution with median and p95 over the 60 s window."""
    return {
        "median": ms(p95 / 2 if median is None else median),
        "p95": ms(p95),
        "window": WINDOW_MS,
    }


@dataclass(frozen=True)
class Spec:
    """One candidate of an example: forwarding p95 ``delay`` and median ``rtt`` (s), path
    capacity ``bw`` (bytes/s), queue ``wait`` and step ``latency`` p95 (s), prefill rate
    (tokens/s), accelerator memory free and weights (bytes), free capacity (fraction), the
    reuse keys it holds, its service."""

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
    return {
        "name": name,
        "address": "127.0.0.1",
        "port": port,
        "username": login[0],
        "password": login[1],
    }


def config(
    specs: list[Spec], csma: int | Callable[[Spec], Json], context: Json | None = None
) -> Json:
    """agent-selection configuration: tiers, context, candidates behind one C-SMA (its
    NETCONF port) or behind the C-SMA that ``csma`` names for each."""
    route = (lambda _: c_sma(csma)) if isinstance(csma, int) else csma
    candidates = [
        {
            "csci-id": s.csci_id,
            "cs-id": s.service,
            "region": "R",
            "trusted": True,
            "c-sma": route(s),
        }
        for s in specs
    ]
    tiers = [
        {"name": "small", "rank": 1},
        {"name": "capable", "rank": 2},
        {"name": "large", "rank": 3},
    ]
    return {
        "capability-tiers": {"capability-tier": tiers},
        "selection-context": context or {},
        "candidates": {"candidate": candidates},
    }


MODES = ("request-response", "streaming", "tool-call", "fan-out")
PRECISIONS = ("bf16", "fp8")
CONTEXT_WINDOW = 200_000  # tokens
LOAD_RATE = 2000  # MB/s


def computing(spec: Spec, now: float, source: str = C_SMA) -> Json:
    """The computing container of one advertise-capability candidate."""
    m = meta(now, source)
    accelerator: Json = {
        "precision": [f"{AS}:{p}" for p in PRECISIONS],
        "memory-free": str(int(spec.hbm_free)),
        **m,
    }
    if spec.free_capacity is not None:
        accelerator["free-capacity"] = f"{spec.free_capacity:.4f}"
    return {
        "capability": {
            "tier-offered": spec.tier,
            "context-window": str(CONTEXT_WINDOW),
            "mode": [f"{AS}:{x}" for x in MODES],
            **m,
        },
        "accelerator": accelerator,
        "waiting-work": {"queue-delay": {**dist(spec.wait), **m}, **m},
        "token-rate": {"prefill-rate": f"{spec.prefill:.3f}", **m},
        "step-latency": {**dist(spec.latency), **m},
        "artifact": {
            "weights-bytes": str(int(spec.weights)),
            "resident": True,
            "load-rate": f"{LOAD_RATE:.3f}",
            **m,
        },
    }


def _stated(p95: float) -> Json:
    """A cats-csma-config stated-latency: :func:`dist`'s median and p95 over its window."""
    return {"median": ms(p95 / 2), "p95": ms(p95), "window-ms": int(WINDOW_MS)}


def stated_capability(spec: Spec) -> Json:
    """The ``capability`` of a cats-csma-config instance with which ``catsctl csma``
    advertises what :func:`computing` describes (agents.csma.capability)."""
    stated: Json = {
        "tier": spec.tier,
        "context-window": CONTEXT_WINDOW,
        "modes": list(MODES),
        "precisions": list(PRECISIONS),
        "prefill-rate": f"{spec.prefill:.3f}",
        "memory-free": int(spec.hbm_free),
        "weights": int(spec.weights),
        "resident": True,
        "load-rate": f"{LOAD_RATE:.3f}",
        "queue-delay": _stated(spec.wait),
        "step-latency": _stated(spec.latency),
    }
    if spec.free_capacity is not None:
        stated["free-capacity"] = f"{spec.free_capacity:.4f}"
    return stated


def capability(specs: list[Spec], now: float, sequence: int = 1, source: str = C_SMA) -> Json:
    """advertise-capability (MSG-4) of the C-SMA ``source`` for every candidate."""
    return {
        "c-sma": source,
        "sequence-number": str(sequence),
        "candidate": [
            {"csci-id": s.csci_id, "computing": computing(s, now, source)} for s in specs
        ],
    }


def forwarding(specs: list[Spec], now: float, sequence: int = 1, source: str = C_NMA) -> Json:
    """advertise-forwarding-view (MSG-7) of the C-NMA ``source``: one path per candidate,
    p95 delay, median rtt."""
    m = meta(now, source)
    return {
        "c-nma": source,
        "sequence-number": str(sequence),
        "candidate": [
            {
                "csci-id": s.csci_id,
                "path-set": {
                    "path": [
                        {
                            "path-id": "p1",
                            "egress-capacity": str(int(s.bw)),
                            "delay": {**dist(s.delay, s.rtt), **m},
                            "region": ["R"],
                            **m,
                        }
                    ]
                },
            }
            for s in specs
        ],
    }


def episode() -> list[Spec]:
    """The step-30 episode of 8.4 (agents/gateway/examples/step30-episode.json): B reports
    more free capacity and a shorter queue; C holds the whole working set."""
    return [
        Spec("B", delay=0.4, wait=0.10, free_capacity=0.6, prefill=1_000.0, hbm_free=24 * GB,
             holds=("docs-core", "docs-extra")),
        Spec("C", delay=0.4, wait=0.25, free_capacity=0.2, hbm_free=20 * GB,
             holds=("ctx", "docs-core", "docs-extra", "plan")),
    ]  # fmt: skip
