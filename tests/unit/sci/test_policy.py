"""Dispatcher policy: eligibility and the five algorithms of 6.1."""

from __future__ import annotations

from collections import Counter

from agents.sci.policy import Candidate, eligible, rank
from agents.sci.values import Health, SiId

A, B, C = SiId("a"), SiId("b"), SiId("c")


def _c(si_id: SiId, health: Health = Health.HEALTHY, active: int = 0, **kw: object) -> Candidate:
    return Candidate(si_id, health, 10, active, **kw)  # type: ignore[arg-type]


def test_never_unhealthy_or_unknown_and_degraded_only_as_last_resort() -> None:
    pool = [_c(A, Health.UNHEALTHY), _c(B, Health.DEGRADED), _c(C, Health.HEALTHY)]
    assert [c.si_id for c in eligible(pool, degraded_last_resort=True).candidates] == [C]
    pool = [_c(A, Health.UNHEALTHY), _c(B, Health.DEGRADED), _c(C, Health.UNKNOWN)]
    found = eligible(pool, degraded_last_resort=True)
    assert ([c.si_id for c in found.candidates], found.degraded) == ([B], True)
    assert eligible(pool, degraded_last_resort=False).candidates == ()


def test_full_and_drained_instances_are_not_eligible() -> None:
    pool = [_c(A, active=10), _c(B, in_service=False), _c(C, active=9)]
    assert [c.si_id for c in eligible(pool, degraded_last_resort=True).candidates] == [C]


def test_round_robin_follows_the_weights() -> None:
    pool = [_c(A, weight=3), _c(B, weight=1)]
    firsts = Counter(rank(pool, "round-robin", turn)[0].si_id for turn in range(400))
    assert firsts == {A: 300, B: 100}


def test_least_connections_slot_based_response_time_and_resources() -> None:
    pool = [
        _c(A, active=5, response_time_ms=30.0, utilization=10.0),
        _c(B, active=2, response_time_ms=10.0, utilization=90.0),
        _c(C, active=7, response_time_ms=20.0, utilization=50.0),
    ]
    assert [c.si_id for c in rank(pool, "least-connections", 0)] == [B, A, C]
    assert [c.si_id for c in rank(pool, "slot-based", 0)] == [B, A, C]
    assert [c.si_id for c in rank(pool, "weighted-response-time", 0)] == [B, C, A]
    assert [c.si_id for c in rank(pool, "resource-aware", 0)] == [A, C, B]


def test_ties_rotate() -> None:
    pool = [_c(A), _c(B), _c(C)]
    assert {rank(pool, "least-connections", turn)[0].si_id for turn in range(3)} == {A, B, C}
