"""Health Monitor logic: check verdicts with hysteresis and the health they classify (5.1, 5.2).

Each check type keeps a verdict: *down* after N consecutive failures, *up* after M consecutive
passes, unchanged in between, unknown until either happens. The health of an instance is then

- UNHEALTHY when liveness or readiness is down (the instance is not operational or not ready),
- UNKNOWN when liveness or readiness is not known yet (treated as UNHEALTHY),
- DEGRADED when the performance check is down,
- HEALTHY otherwise (a performance check that has not run yet raises no doubt).

Pure: :func:`observe` returns the new state and the transition, if any.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agents.sci.values import CheckResult, CheckType, Health


@dataclass(frozen=True, slots=True)
class Hysteresis:
    """N consecutive failures to go down, M consecutive passes to come up (5.2)."""

    failures_to_down: int = 3
    passes_to_up: int = 2


@dataclass(frozen=True, slots=True)
class Verdict:
    """One check type's verdict: up, down or unknown (None), and its consecutive counters."""

    up: bool | None = None
    failures: int = 0
    passes: int = 0

    def after(self, passed: bool, hysteresis: Hysteresis) -> Verdict:  # noqa: FBT001
        """The verdict after one more check result."""
        failures = 0 if passed else self.failures + 1
        passes = self.passes + 1 if passed else 0
        up = self.up
        if failures >= hysteresis.failures_to_down:
            up = False
        elif passes >= hysteresis.passes_to_up:
            up = True
        return Verdict(up, failures, passes)


@dataclass(frozen=True, slots=True)
class InstanceHealth:
    """The Health Monitor's state of one instance (ietf-cats-sci service-instance/state)."""

    health: Health = Health.UNKNOWN
    since: float = 0.0
    liveness: Verdict = Verdict()
    readiness: Verdict = Verdict()
    performance: Verdict = Verdict()
    last_check: float | None = None
    last_check_type: CheckType | None = None
    last_passed: bool | None = None
    last_failure_reason: str = ""

    def verdict(self, kind: CheckType) -> Verdict:
        """The verdict of a check type (administrative changes act on readiness)."""
        if kind is CheckType.LIVENESS:
            return self.liveness
        if kind is CheckType.PERFORMANCE:
            return self.performance
        return self.readiness

    @property
    def consecutive_failures(self) -> int:
        """Consecutive failures of the last check type."""
        return self.verdict(self.last_check_type or CheckType.LIVENESS).failures

    @property
    def consecutive_passes(self) -> int:
        """Consecutive passes of the last check type."""
        return self.verdict(self.last_check_type or CheckType.LIVENESS).passes


@dataclass(frozen=True, slots=True)
class Transition:
    """A health change: what ``instance-health-changed`` reports (5.2)."""

    old: Health
    new: Health
    check_type: CheckType
    consecutive: int
    reason: str


def classify(state: InstanceHealth) -> Health:
    """The health the verdicts amount to (5.2)."""
    if state.liveness.up is False or state.readiness.up is False:
        return Health.UNHEALTHY
    if state.liveness.up is None or state.readiness.up is None:
        return Health.UNKNOWN
    if state.performance.up is False:
        return Health.DEGRADED
    return Health.HEALTHY


def observe(
    state: InstanceHealth, result: CheckResult, hysteresis: Hysteresis, now: float
) -> tuple[InstanceHealth, Transition | None]:
    """Fold one check result into the state; the transition when the health changed."""
    kind = CheckType.READINESS if result.kind is CheckType.ADMINISTRATIVE else result.kind
    verdict = state.verdict(kind).after(result.passed, hysteresis)
    updated = replace(
        state,
        liveness=verdict if kind is CheckType.LIVENESS else state.liveness,
        readiness=verdict if kind is CheckType.READINESS else state.readiness,
        performance=verdict if kind is CheckType.PERFORMANCE else state.performance,
        last_check=now,
        last_check_type=result.kind,
        last_passed=result.passed,
        last_failure_reason=state.last_failure_reason if result.passed else result.reason,
    )
    health = classify(updated)
    if health is state.health:
        return updated, None
    consecutive = verdict.passes if result.passed else verdict.failures
    reason = result.reason or f"{consecutive} consecutive {result.kind.value} checks passed"
    transition = Transition(state.health, health, result.kind, consecutive, reason)
    return replace(updated, health=health, since=now), transition
