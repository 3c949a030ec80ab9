"""Dispatcher decision logic: eligibility and load-balancing order (sci-implementation 6.1).

Pure: given the candidates' health and load, :func:`rank` returns the order in which the
Dispatcher tries them (the first is the choice, the rest are the Failure Handler's retries).
UNHEALTHY and UNKNOWN instances are never eligible; DEGRADED ones only when no HEALTHY
instance can take the request and ``degraded-last-resort`` is set; a full instance (active
sessions at max capacity) cannot take a request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agents.sci.values import Health, SiId

ALGORITHMS = (
    "round-robin",
    "least-connections",
    "weighted-response-time",
    "resource-aware",
    "slot-based",
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the Dispatcher knows of one instance when a request arrives."""

    si_id: SiId
    health: Health
    max_capacity: int
    active: int
    weight: int = 1
    in_service: bool = True
    response_time_ms: float | None = None
    utilization: float | None = None

    @property
    def free(self) -> int:
        """Slots not in use (``max_capacity - active_sessions``)."""
        return self.max_capacity - self.active


@dataclass(frozen=True, slots=True)
class Eligible:
    """The instances a request may go to, and whether they are DEGRADED last resorts."""

    candidates: tuple[Candidate, ...]
    degraded: bool = False


def eligible(candidates: Sequence[Candidate], *, degraded_last_resort: bool) -> Eligible:
    """HEALTHY instances with a free slot; else DEGRADED ones as a last resort (6.1 step 2)."""
    usable = [c for c in candidates if c.in_service and c.free > 0]
    healthy = tuple(c for c in usable if c.health is Health.HEALTHY)
    if healthy or not degraded_last_resort:
        return Eligible(healthy)
    return Eligible(tuple(c for c in usable if c.health is Health.DEGRADED), degraded=True)


def _rotate(items: Sequence[Candidate], turn: int) -> list[Candidate]:
    if not items:
        return []
    start = turn % len(items)
    return [*items[start:], *items[:start]]


def _weighted_round_robin(items: Sequence[Candidate], turn: int) -> list[Candidate]:
    """Each instance gets ``weight`` turns out of ``SUM(weight)``, interleaved."""
    total = sum(c.weight for c in items)
    slot = turn % total
    order = sorted(
        ((k * total / c.weight, n) for n, c in enumerate(items) for k in range(c.weight)),
    )
    first = items[order[slot][1]]
    return [first, *_rotate([c for c in items if c is not first], turn)]


_KEYS: dict[str, Callable[[Candidate], float]] = {
    "least-connections": lambda c: c.active / c.weight,
    "weighted-response-time": lambda c: (c.response_time_ms or 0.0) / c.weight,
    "resource-aware": lambda c: c.utilization or 0.0,
    "slot-based": lambda c: -c.free,
}


def rank(candidates: Sequence[Candidate], algorithm: str, turn: int) -> list[Candidate]:
    """The order of trial among eligible candidates (6.1 step 3).

    Ties are broken by rotating with ``turn`` so that equal instances share the load. An
    instance without a measured response time or utilization is tried as if it had none, so
    that it gets measured.
    """
    if not candidates:
        return []
    if algorithm == "round-robin":
        return _weighted_round_robin(candidates, turn)
    key = _KEYS[algorithm]
    return sorted(_rotate(candidates, turn), key=key)
