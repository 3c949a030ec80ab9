"""The periodic activities of an SCI, one thread each: collection, checks, expiry, reports.

Metric Collector pulls (4.2) every sampling interval; the Health Monitor runs liveness,
readiness and performance checks at their own intervals (5.1); the Session Manager expires
idle bindings (6.2); the Reporting Interface ticks (7.2). Every thread owns its HTTP session
and stops when the shared event is set.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType

import requests

from agents.sci import checks
from agents.sci.collector import pull
from agents.sci.config import InstanceConfig
from agents.sci.errors import SciError
from agents.sci.reporter import Reporter
from agents.sci.runtime import Runtime

LOG = logging.getLogger(__name__)
REPORT_TICK_S = 0.2
EXPIRY_TICK_S = 1.0

Task = Callable[[requests.Session], None]


class Periodic:
    """Threads that each run a task every interval until stopped; owned with ``with``."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def add(self, name: str, interval_s: float, task: Task) -> None:
        """Run ``task`` now and then every ``interval_s`` seconds."""

        def loop() -> None:
            with requests.Session() as session:
                while not self._stop.is_set():
                    began = time.monotonic()
                    try:
                        task(session)
                    except Exception:
                        LOG.exception("%s failed", name)
                    self._stop.wait(max(0.0, interval_s - (time.monotonic() - began)))

        self._threads.append(threading.Thread(target=loop, name=name, daemon=True))

    def __enter__(self) -> Periodic:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)


def _collect(runtime: Runtime, instance: InstanceConfig) -> Task:
    url = instance.metrics_uri or ""
    timeout = max(0.5, runtime.config.collection.sampling_interval_ms / 2000)

    def task(session: requests.Session) -> None:
        try:
            runtime.record_scrape(instance.si_id, pull(session, url, timeout, time.time()))
        except SciError as exc:
            LOG.debug("collect %s: %s", instance.si_id, exc)

    return task


def _check(runtime: Runtime, instance: InstanceConfig, kind: str) -> Task:
    settings, port = runtime.config.health, runtime.config.port

    def task(session: requests.Session) -> None:
        if kind == "liveness":
            result = checks.liveness(session, instance, settings, port)
        elif kind == "readiness":
            result = checks.readiness(session, instance, settings, port)
        else:
            result = runtime.performance(instance.si_id, time.time())
        runtime.record_check(instance.si_id, result, time.time())

    return task


def schedule(runtime: Runtime, reporter: Reporter | None) -> Periodic:
    """Every periodic activity of the SCI, not yet started."""
    config, periodic = runtime.config, Periodic()
    health = config.health
    for item in config.instances:
        method = item.collection_method or config.collection.method
        if method == "pull-based" and item.metrics_uri:
            periodic.add(
                f"collect-{item.si_id}",
                config.collection.sampling_interval_ms / 1000,
                _collect(runtime, item),
            )
        periodic.add(
            f"liveness-{item.si_id}",
            health.liveness_interval_ms / 1000,
            _check(runtime, item, "liveness"),
        )
        periodic.add(
            f"readiness-{item.si_id}",
            health.readiness_interval_ms / 1000,
            _check(runtime, item, "readiness"),
        )
        periodic.add(
            f"performance-{item.si_id}",
            health.performance_interval_ms / 1000,
            _check(runtime, item, "performance"),
        )

    def expire(_: requests.Session) -> None:
        runtime.sessions.expire(time.time())

    periodic.add("expiry", EXPIRY_TICK_S, expire)
    if reporter is not None:

        def report(_: requests.Session) -> None:
            reporter.tick(time.time())

        periodic.add("report", REPORT_TICK_S, report)
    return periodic
