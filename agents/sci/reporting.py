"""Reporting Interface logic: when to report and what (sci-implementation 7.2, 7.3).

Pure functions: :func:`threshold_triggers` compares the current aggregate with the last
report, :func:`decide` applies the heartbeat and the rate limit, and
:mod:`agents.sci.report` renders the Table 1 message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agents.sci.config import ReportingSettings
from agents.sci.values import Health, SiId

HEARTBEAT = "periodic-heartbeat"
THRESHOLD_TRIGGERS = frozenset(
    {
        "gas-absolute-change",
        "gas-relative-change",
        "computing-time-deviation",
        "instance-health-change",
        "optional-metric-change",
    }
)
EVENT_TRIGGERS = frozenset({"all-instances-unhealthy", "instance-recovered", "security-event"})


@dataclass(frozen=True, slots=True)
class Aggregate:
    """What a report states and the thresholds compare: GAS, Computing Time, healths."""

    gas: int
    computing_time: float | None
    health: tuple[tuple[SiId, Health], ...]

    @property
    def serving(self) -> int:
        """Instances HEALTHY or DEGRADED."""
        return sum(1 for _, h in self.health if h in (Health.HEALTHY, Health.DEGRADED))


@dataclass(frozen=True, slots=True)
class Sent:
    """The last report sent: its aggregate and when (the thresholds' reference)."""

    aggregate: Aggregate
    at: float
    heartbeat_at: float


@dataclass(frozen=True, slots=True)
class RateWindow:
    """Send times of the recent reports, for ``min-interval-ms`` and ``max-reports``."""

    times: tuple[float, ...] = ()

    def after(self, now: float, horizon: float) -> RateWindow:
        """The window with a report sent at ``now``, forgetting those older than ``horizon``."""
        return RateWindow((*(t for t in self.times if now - t < horizon), now))


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether to send now, as which kind, for which triggers; or why not."""

    kind: str | None
    triggers: frozenset[str] = frozenset()
    rate_limited: bool = False


def _relative(old: float, new: float) -> float:
    return float("inf") if old == 0 else abs(new - old) * 100 / abs(old)


def threshold_triggers(
    last: Aggregate | None, now: Aggregate, settings: ReportingSettings
) -> frozenset[str]:
    """The threshold triggers (7.2) that ``now`` crosses relative to the last report."""
    if last is None:
        return frozenset()
    found: set[str] = set()
    change = abs(now.gas - last.gas)
    if change > settings.gas_absolute:
        found.add("gas-absolute-change")
    if change and _relative(last.gas, now.gas) > settings.gas_relative:
        found.add("gas-relative-change")
    old_ct, new_ct = last.computing_time, now.computing_time
    if new_ct is not None and (
        old_ct is None or _relative(old_ct, new_ct) > settings.computing_time_relative
    ):
        found.add("computing-time-deviation")  # a first estimate is news; going idle is not
    if dict(last.health) != dict(now.health):
        found.add("instance-health-change")
    return frozenset(found & settings.triggers)


def event_triggers(
    last: Aggregate | None, now: Aggregate, recovered: Iterable[SiId], settings: ReportingSettings
) -> frozenset[str]:
    """Event triggers (7.2): all instances became UNHEALTHY, or one recovered to HEALTHY."""
    found: set[str] = set()
    if now.health and now.serving == 0 and last is not None and last.serving > 0:
        found.add("all-instances-unhealthy")
    if any(True for _ in recovered):
        found.add("instance-recovered")
    return frozenset(found & settings.triggers)


def decide(
    now: float,
    last: Sent | None,
    window: RateWindow,
    triggers: frozenset[str],
    settings: ReportingSettings,
) -> Decision:
    """Heartbeat, threshold or event report now, or nothing, under the rate limit (7.2).

    An event report may go within ``min-interval-ms`` when ``events-exempt``; every report
    counts towards ``max-reports`` per ``interval-ms``. A suppressed change stays pending and
    goes with the next report.
    """
    events = triggers & EVENT_TRIGGERS
    thresholds = triggers & THRESHOLD_TRIGGERS
    heartbeat_due = (
        last is None or (now - last.heartbeat_at) * 1000 >= settings.heartbeat_interval_ms
    )
    if events:
        kind = "event"
    elif thresholds:
        kind = "threshold"
    elif heartbeat_due:
        kind = "heartbeat"
    else:
        return Decision(None)
    chosen = triggers if kind != "heartbeat" else frozenset({HEARTBEAT})
    if heartbeat_due and kind != "heartbeat":
        chosen |= {HEARTBEAT}
    recent = [t for t in window.times if (now - t) * 1000 < settings.rate_interval_ms]
    if settings.max_reports is not None and len(recent) >= settings.max_reports:
        return Decision(None, chosen, rate_limited=True)
    exempt = kind == "event" and settings.events_exempt
    if window.times and not exempt and (now - window.times[-1]) * 1000 < settings.min_interval_ms:
        return Decision(None, chosen, rate_limited=True)
    return Decision(kind, chosen)
