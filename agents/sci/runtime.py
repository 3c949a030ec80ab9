"""The SCI's shared runtime state: health, metrics, samples, sessions and counters.

The one mutable owner that the collector, Health Monitor, Dispatcher and Reporting Interface
threads share (sci-implementation 3). Decisions are made by the pure modules on snapshots
taken under the lock; the Failure Handler's reactions to a health change (5.2, 5.3) are in
:meth:`Runtime.record_check`.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
from collections import Counter, deque
from dataclasses import dataclass

from agents.sci import aggregator, health, policy
from agents.sci.collector import Scrape, derive
from agents.sci.config import SciConfig
from agents.sci.report import InstanceDetail, health_notification, rfc3339
from agents.sci.reporting import Aggregate
from agents.sci.sessions import SessionManager
from agents.sci.values import CheckResult, Health, InstanceMetrics, Sample, SiId

LOG = logging.getLogger("agents.sci")
MAX_SAMPLES = 200_000
MAX_NOTIFICATIONS = 256
EWMA_ALPHA = 0.2  # weight of the newest response time in the Dispatcher's per-instance average


@dataclass(frozen=True, slots=True)
class Snapshot:
    """GAS, Computing Time and instance details at one instant (4.3)."""

    at: float
    gas: int
    computing_time: aggregator.ComputingTime | None
    instances: tuple[InstanceDetail, ...]

    @property
    def aggregate(self) -> Aggregate:
        """What the thresholds compare."""
        value = None if self.computing_time is None else self.computing_time.value
        return Aggregate(self.gas, value, tuple((i.si_id, i.health) for i in self.instances))


class Runtime:
    """State of one running SCI; thread-safe."""

    def __init__(self, config: SciConfig, now: float) -> None:
        self.config = config
        self.sessions = SessionManager(config.affinity)
        self.started = now
        self._lock = threading.Lock()
        self._hysteresis = health.Hysteresis(
            config.health.failures_to_down, config.health.passes_to_up
        )
        self._health = {i.si_id: health.InstanceHealth(since=now) for i in config.instances}
        self._scrapes: dict[SiId, Scrape] = {}
        self._metrics: dict[SiId, InstanceMetrics] = {}
        self._above: dict[SiId, dict[str, float]] = {}
        self._samples: deque[Sample] = deque(maxlen=MAX_SAMPLES)
        self._ewma: dict[SiId, float] = {}
        self._recovered: set[SiId] = set()
        self._last_transition = 0.0
        self.notifications: deque[dict[str, object]] = deque(maxlen=MAX_NOTIFICATIONS)
        self.dispatch_counts: Counter[str] = Counter()
        self.per_instance: Counter[SiId] = Counter()
        self._turn = itertools.count()

    # Health Monitor and Failure Handler (5.2, 5.3)

    def record_check(self, si_id: SiId, result: CheckResult, now: float) -> None:
        """Fold a check result in; on a health change, notify and react (5.2)."""
        with self._lock:
            state, change = health.observe(self._health[si_id], result, self._hysteresis, now)
            self._health[si_id] = state
            if change is None:
                return
            self._last_transition = now
            if change.new is Health.HEALTHY and change.old is Health.UNHEALTHY:
                self._recovered.add(si_id)
        if change.new is Health.UNHEALTHY:
            self.sessions.release_instance(si_id)  # terminate (or migrate on next request)
        slots = self.loads(now)
        contribution = next(
            aggregator.available_slots(load, self.config.aggregation.degradation_factor)
            for load in slots
            if load.si_id == si_id
        )
        notification = health_notification(self.config, si_id, change, contribution)
        self.notifications.append({"eventTime": rfc3339(now), **notification})
        LOG.warning("notification %s", json.dumps(notification))

    def take_recovered(self) -> frozenset[SiId]:
        """Instances that recovered to HEALTHY since the last call (an event trigger)."""
        with self._lock:
            recovered = frozenset(self._recovered)
            self._recovered.clear()
            return recovered

    def last_transition(self) -> float:
        """When the last health change happened (for batching, 5.3)."""
        with self._lock:
            return self._last_transition

    def health_of(self) -> dict[SiId, Health]:
        """Current health per instance."""
        with self._lock:
            return {si_id: state.health for si_id, state in self._health.items()}

    def instance_health(self, si_id: SiId) -> health.InstanceHealth:
        """The Health Monitor state of one instance."""
        with self._lock:
            return self._health[si_id]

    # Metric Collector (4)

    def record_scrape(self, si_id: SiId, scrape: Scrape) -> None:
        """A new exposition of an instance (pulled or pushed)."""
        with self._lock:
            self._metrics[si_id] = derive(self._scrapes.get(si_id), scrape)
            self._scrapes[si_id] = scrape

    def metrics(self, si_id: SiId, now: float) -> InstanceMetrics | None:
        """The instance's latest metrics, or None once stale (stale-after intervals)."""
        collection = self.config.collection
        with self._lock:
            found = self._metrics.get(si_id)
        limit = collection.stale_after * collection.sampling_interval_ms / 1000
        return found if found is not None and now - found.collected_at <= limit else None

    def record_sample(self, sample: Sample) -> None:
        """A dispatched request ended: a response time sample and the instance's average."""
        with self._lock:
            self._samples.append(sample)
            if sample.ok:
                old = self._ewma.get(sample.si_id, sample.duration_ms)
                self._ewma[sample.si_id] = old + EWMA_ALPHA * (sample.duration_ms - old)

    def samples(self, now: float, si_id: SiId | None = None) -> list[Sample]:
        """Samples within the measurement window (of one instance, or all)."""
        window = self.config.aggregation.measurement_window_ms / 1000
        with self._lock:
            while self._samples and self._samples[0].at < now - window:
                self._samples.popleft()
            return [s for s in list(self._samples) if si_id is None or s.si_id == si_id]

    def performance(self, si_id: SiId, now: float) -> CheckResult:
        """Run the performance check of one instance on its samples and metrics (5.1)."""
        from agents.sci.checks import performance_check  # noqa: PLC0415

        outcome = performance_check(
            self.samples(now, si_id),
            self.metrics(si_id, now),
            self.config.health,
            self._above.get(si_id, {}),
            now,
        )
        self._above[si_id] = dict(outcome.above_since)
        return outcome.result

    # Metric Aggregator (4.3, 5.3)

    def loads(self, now: float) -> list[aggregator.InstanceLoad]:
        """Capacity, load and health of every instance.

        Active sessions are the Session Manager's count (sci-implementation 4.3): a session
        holds its slot from binding until it ends or expires, a request outside a session
        while it is in flight, and both are released the moment they finish (6.3). The
        instance's scraped in-flight gauge is a sample of the past (up to a sampling interval
        old): taken for occupancy it would keep a finished request counted until the next
        scrape, so GAS would be too low and least-connections would pass over an idle
        instance. It stays in the collected metrics (and may inform health), not in GAS.
        """
        del now
        active = self.sessions.active()
        healths = self.health_of()
        return [
            aggregator.InstanceLoad(
                item.si_id,
                healths[item.si_id],
                item.max_capacity,
                active.get(item.si_id, 0),
                in_service=item.admin_state == "in-service",
            )
            for item in self.config.instances
        ]

    def snapshot(self, now: float) -> Snapshot:
        """GAS, Computing Time and the instance details now."""
        settings = self.config.aggregation
        loads = self.loads(now)
        healths = {load.si_id: load.health for load in loads}
        details = tuple(
            InstanceDetail(
                load.si_id,
                load.health,
                load.max_capacity,
                aggregator.available_slots(load, settings.degradation_factor),
                load.active_sessions,
                self.metrics(load.si_id, now),
            )
            for load in loads
        )
        ct = aggregator.computing_time(self.samples(now), healths, settings, now)
        return Snapshot(now, aggregator.gas(loads, settings), ct, details)

    # Dispatcher (6.1)

    def candidates(self, now: float) -> list[policy.Candidate]:
        """Every instance as the Dispatcher sees it."""
        with self._lock:
            averages = dict(self._ewma)
        found = []
        for load, item in zip(self.loads(now), self.config.instances, strict=True):
            metrics = self.metrics(item.si_id, now)
            used = (
                [metrics.resource(name) for name in self.config.dispatch.resource_aware_resources]
                if metrics
                else []
            )
            known = [value for value in used if value is not None]
            found.append(
                policy.Candidate(
                    item.si_id,
                    load.health,
                    item.max_capacity,
                    load.active_sessions,
                    item.weight,
                    load.in_service,
                    averages.get(item.si_id),
                    max(known) if known else None,
                )
            )
        return found

    def turn(self) -> int:
        """The next round-robin turn."""
        return next(self._turn)

    def count(self, name: str, si_id: SiId | None = None) -> None:
        """Increment a dispatch counter (and the instance's dispatched-requests)."""
        with self._lock:
            self.dispatch_counts[name] += 1
            if si_id is not None:
                self.per_instance[si_id] += 1
