"""The draft's worked examples as RFC 7951 members of the agent-selection RPCs and config.

The numbers are those of tests/unit/selection/mapping/test_worked_examples.py (the pure
core's), written as a gateway, a C-SMA and a C-NMA would send them: milliseconds, bytes,
date-and-time. ``now`` is the time the advertisements are stamped with. The candidates, the
configuration and the advertisements are built by controller.demo.drafts (the demo's stage G
plays the step-30 episode with them) and re-exported here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from controller.demo.drafts import (
    AS,
    CPS_LOGIN,
    GB,
    SERVICE,
    TENANT,
    WINDOW_MS,
    Spec,
    c_sma,
    capability,
    computing,
    config,
    dist,
    episode,
    forwarding,
    iso,
    meta,
    ms,
)
from controller.types import Json

__all__ = [
    "AS",
    "CPS_LOGIN",
    "GB",
    "SERVICE",
    "TENANT",
    "WINDOW_MS",
    "Json",
    "Spec",
    "c_sma",
    "capability",
    "computing",
    "config",
    "dist",
    "episode",
    "forwarding",
    "iso",
    "meta",
    "ms",
]
RETRIEVAL = "192.0.2.0/24"

CONTEXT_68: Json = {
    "stability": {"min-interval": "60000", "min-improvement": "0.05"},
    "look-ahead-horizon": 10,
}


def element(key: str, cls: str, size: float, tokens: int, **extra: Any) -> Json:
    """A working-set element."""
    return {
        "reuse-key": key,
        "element-class": f"{AS}:{cls}",
        "element-size": str(int(size)),
        "tokens-to-reprocess": str(tokens),
        **extra,
    }


def descriptor(
    session: str, step: int, elements: list[Json], service: str = SERVICE, **extra: Any
) -> Json:
    """A step descriptor of TENANT for ``service`` requiring tier 'capable'."""
    return {
        "service-id": service,
        "session-id": session,
        "tenant": TENANT,
        "turn-id": 1,
        "step-id": step,
        "capability-tier": "capable",
        "working-set": {"element": elements},
        **extra,
    }


# 8.4: A near but small; B holds documents, KV absent (0.6 s to recompute); C holds all.
KV = element("kv", "model-context-state", 0.33 * GB, 6_000)
DOCS = element("docs", "retrieved-material", 2e6, 1_000)
TWO_SECONDS: Json = {
    "quantity": f"{AS}:step-completion-time",
    "scope": "step",
    "target": "2000",
    "percentile": "95",
    "window": WINDOW_MS,
}
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
    return descriptor(
        session,
        step,
        [CTX, DOC_SET],
        service,
        **{"remaining-horizon": 40, "selection-context": CONTEXT_68},
    )


# 8.4 step-30 episode: the retrieval tool overruns; the reduced retrieval set is applied.
PLAN = element("plan", "plan-scratch-state", 1e6, 4_000)
CORE_DOCS = element("docs-core", "retrieved-material", 5e6, 1_000)
EXTRA_DOCS = element("docs-extra", "retrieved-material", 45e6, 9_000, sufficient=False)


def descriptor_episode(session: str, step: int, service: str = SERVICE) -> Json:
    """The step-30 descriptor: truncation of the working set permitted."""
    return descriptor(
        session,
        step,
        [CTX, CORE_DOCS, EXTRA_DOCS, PLAN],
        service,
        **{
            "remaining-horizon": 40,
            "selection-context": CONTEXT_68,
            "degradation": [f"{AS}:truncated-working-set"],
        },
    )


def overrun(session: str, now: float) -> Json:
    """invalidation-notice: the retrieval call expected at 100 ms still running at 4 s."""
    return {
        "reporter": "ietf-cats-types:agent-gateway",
        "condition": f"{AS}:step-overrun",
        "session-id": session,
        "turn-id": 1,
        "step-id": 30,
        "at": iso(now),
        "step-progress": {
            "elapsed": "4000",
            "expected": "100",
            "endpoint": RETRIEVAL,
            "remaining": "2000",
        },
    }


def holdings(specs: list[Spec]) -> list[tuple[str, str]]:
    """(csci-id, reuse-key) of every element a candidate holds."""
    return [(s.csci_id, key) for s in specs for key in s.holds]


def renamed(specs: list[Spec], prefix: str, service: str) -> list[Spec]:
    """The candidates of an example under their own names and service (one C-PS for all)."""
    return [replace(s, csci_id=f"{prefix}{s.csci_id}", service=service) for s in specs]
