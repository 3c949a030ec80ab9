"""Health Monitor: verdicts with hysteresis and the health they classify (5.1, 5.2)."""

from __future__ import annotations

from agents.sci.health import Hysteresis, InstanceHealth, Transition, observe
from agents.sci.values import CheckResult, CheckType, Health

N3_M2 = Hysteresis(failures_to_down=3, passes_to_up=2)
LIVE_OK = CheckResult(CheckType.LIVENESS, passed=True)
LIVE_FAIL = CheckResult(CheckType.LIVENESS, passed=False, reason="refused")
READY_OK = CheckResult(CheckType.READINESS, passed=True)
PERF_FAIL = CheckResult(CheckType.PERFORMANCE, passed=False, reason="slow")
PERF_OK = CheckResult(CheckType.PERFORMANCE, passed=True)


def _run(
    state: InstanceHealth, results: list[CheckResult]
) -> tuple[InstanceHealth, list[Transition]]:
    changes = []
    for n, result in enumerate(results):
        state, change = observe(state, result, N3_M2, float(n))
        if change is not None:
            changes.append(change)
    return state, changes


def _healthy() -> InstanceHealth:
    state, _ = _run(InstanceHealth(), [LIVE_OK, READY_OK, LIVE_OK, READY_OK])
    assert state.health is Health.HEALTHY
    return state


def test_unknown_until_m_passes_of_liveness_and_readiness() -> None:
    state, changes = _run(InstanceHealth(), [LIVE_OK, READY_OK, LIVE_OK])
    assert state.health is Health.UNKNOWN
    assert changes == []
    state, changes = _run(state, [READY_OK])
    assert state.health is Health.HEALTHY
    assert changes[0].old is Health.UNKNOWN
    assert (changes[0].check_type, changes[0].consecutive) == (CheckType.READINESS, 2)


def test_n_consecutive_failures_make_it_unhealthy() -> None:
    state, changes = _run(_healthy(), [LIVE_FAIL, LIVE_FAIL])
    assert (state.health, changes) == (Health.HEALTHY, [])
    state, changes = _run(state, [LIVE_FAIL])
    assert state.health is Health.UNHEALTHY
    assert (changes[0].new, changes[0].consecutive, changes[0].reason) == (
        Health.UNHEALTHY,
        3,
        "refused",
    )
    assert state.consecutive_failures == 3


def test_a_pass_in_between_resets_the_count() -> None:
    state, changes = _run(_healthy(), [LIVE_FAIL, LIVE_FAIL, LIVE_OK, LIVE_FAIL, LIVE_FAIL])
    assert (state.health, changes) == (Health.HEALTHY, [])


def test_m_passes_bring_it_back() -> None:
    state, _ = _run(_healthy(), [LIVE_FAIL] * 3)
    state, changes = _run(state, [LIVE_OK])
    assert state.health is Health.UNHEALTHY
    state, changes = _run(state, [LIVE_OK])
    assert state.health is Health.HEALTHY
    assert [(c.old, c.new) for c in changes] == [(Health.UNHEALTHY, Health.HEALTHY)]


def test_performance_failures_degrade_and_passes_restore() -> None:
    state, changes = _run(_healthy(), [PERF_FAIL] * 3)
    assert state.health is Health.DEGRADED
    state, changes = _run(state, [LIVE_FAIL] * 3)
    assert [(c.old, c.new) for c in changes] == [(Health.DEGRADED, Health.UNHEALTHY)]
    state, changes = _run(state, [LIVE_OK, LIVE_OK])
    assert state.health is Health.DEGRADED  # performance still down
    state, changes = _run(state, [PERF_OK, PERF_OK])
    assert state.health is Health.HEALTHY


def test_maintenance_acts_on_readiness() -> None:
    admin = CheckResult(CheckType.ADMINISTRATIVE, passed=False, reason="maintenance")
    state, changes = _run(_healthy(), [admin] * 3)
    assert state.health is Health.UNHEALTHY
    assert changes[0].check_type is CheckType.ADMINISTRATIVE
