"""The report path: what an SCI observes of its instance, and how it reaches a decider.

A channel samples every instance every ``interval`` seconds (each instance at its own phase)
and delivers a sample ``delay`` seconds later: the SCI -> C-SMA -> C-PS path of
service-metrics-op 6.1 and 8, or a router's metrics scrape. With delta thresholds, a sample is
sent only when it differs significantly from the last one sent (the C-SMA's rule, which is
the C-PS's update-control/delta-threshold rule, :func:`controller.service_metrics.control.
significant`), or when a heartbeat is due; a decider then holds an older value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from controller.evaluate.server import Server
from controller.selection.joint import CstEntry, from_us
from controller.service_metrics.control import significant
from controller.service_metrics.policy import DeltaThreshold
from controller.types import CsciId, CsId

SAFETY_MARGIN = 0.8
"""The SCI's GAS safety margin (sci-implementation 4.3: GAS = floor(margin x free slots))."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One observation of an instance, as an SCI or a metrics endpoint reports it.

    ``computing_time`` is the mean wait plus prefill (s) over the measurement window, None
    before anything was measured; ``waiting`` the seconds of queued prefill work; ``requests``
    the requests waiting or running, ``queued`` those waiting.
    """

    instance: int
    at: float
    gas: int
    computing_time: float | None
    waiting: float
    requests: int
    queued: int
    kv_usage: float


@dataclass(frozen=True, slots=True)
class ChannelSpec:
    """How one decider learns the state of the instances; ``vantage`` is the decider's
    region (None: the C-PS's region, where the centralized deciders run)."""

    name: str
    interval: float
    processing: float = 0.0
    vantage: str | None = None
    thresholds: DeltaThreshold | None = None
    heartbeat: float = 60.0
    window: float = 10.0


def observe(server: Server, now: float, window: float) -> Sample:
    """What an SCI measures of ``server`` at ``now`` (sci-implementation 4.3, 5.3)."""
    spec = server.instance.spec
    present = server.active + len(server.queue)
    return Sample(
        server.instance.index,
        now,
        math.floor(SAFETY_MARGIN * max(0, spec.batch_limit - present)),
        server.computing_time(now, window),
        server.backlog(now),
        present,
        len(server.queue),
        server.kv_usage(),
    )


FRESHNESS_INTERVALS = 3
FRESHNESS_DELAY = 1.0


def freshness(interval: float) -> float:
    """The freshness bound a C-SMA gives its values: three reporting intervals and a second
    of delivery (agent draft 7.4); a value older than that missed reports."""
    return FRESHNESS_INTERVALS * interval + FRESHNESS_DELAY


def stale(held: Sample | None, now: float, interval: float) -> bool:
    """A decision on ``held`` used a stale value: none held, or one past its freshness bound
    (later samples were held back by the thresholds, or have not arrived)."""
    return held is None or now - held.at > freshness(interval)


def _entry(sample: Sample, computing_time: float) -> CstEntry:
    return CstEntry(
        CsId("llm"),
        CsciId(str(sample.instance)),
        sample.gas,
        from_us(round(computing_time * 1e6)),
        sample.at,
        math.inf,
    )


class Channel:
    """The samples a decider holds, one per instance, and the last one sent of each."""

    def __init__(self, spec: ChannelSpec, instances: int, delays: list[float]) -> None:
        self.spec = spec
        self.delays = delays
        self.held: list[Sample | None] = [None] * instances
        self.sent: list[Sample | None] = [None] * instances
        self.sent_at: list[float] = [-math.inf] * instances
        self.synced: list[float] = [-math.inf] * instances
        self.offered = 0
        self.suppressed = 0

    def offer(self, sample: Sample) -> bool:
        """Whether the sample is sent (always without thresholds)."""
        self.offered += 1
        index = sample.instance
        last = self.sent[index]
        due = sample.at - self.sent_at[index] >= self.spec.heartbeat
        thresholds = self.spec.thresholds
        if thresholds is None or last is None or due or _changed(last, sample, thresholds):
            self.sent[index] = sample
            self.sent_at[index] = sample.at
            return True
        self.suppressed += 1
        return False

    def refreshed(self, index: int, now: float) -> float:
        """When the decider last heard of ``index``: its newest sample, or the C-SMA's last
        heartbeat (sent every ``heartbeat`` s, received a delay later; never lost here)."""
        held = self.held[index]
        beats = math.floor((now - self.delays[index]) / self.spec.heartbeat)
        last = beats * self.spec.heartbeat if beats >= 0 else -math.inf
        return max(last, -math.inf if held is None else held.at)

    def deliver(self, sample: Sample, *, sent: bool) -> None:
        """A sample's time reaches the decider: the state view (never held back by thresholds)
        is in sync up to it, and a sent sample's values are held unless a later one is."""
        index = sample.instance
        self.synced[index] = max(self.synced[index], sample.at)
        held = self.held[index]
        if sent and (held is None or held.at < sample.at):
            self.held[index] = sample


def _changed(last: Sample, new: Sample, delta: DeltaThreshold) -> bool:
    """The C-SMA's delta rule on GAS and Computing Time, and the same relative rule on the
    waiting work it advertises with them."""
    if (last.computing_time is None) != (new.computing_time is None):
        return True
    if last.computing_time is not None and new.computing_time is not None:
        if significant(_entry(last, last.computing_time), _entry(new, new.computing_time), delta):
            return True
    elif abs(new.gas - last.gas) > delta.gas_absolute:
        return True
    moved = abs(new.waiting - last.waiting) * 100
    return moved > delta.computing_time_relative * last.waiting
