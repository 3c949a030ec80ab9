"""The service instance: a service with a service-time distribution and a capacity, its
Prometheus ``/metrics``, ``/health`` and ``/ready``, and an admin switch for failures.

- any other path is the service: it takes one of ``capacity`` concurrent slots (beyond them a
  request waits in a queue of ``queue`` places, else gets 503), takes a service time drawn from
  the distribution plus the admin slow-down, and answers 200 JSON (500 when made to fail);
- ``GET /metrics``: the exposition the SCI's collector reads (agents.sci.collector);
- ``GET /health`` (liveness) and ``GET /ready`` (readiness): 200, or 503 when switched off;
- ``POST /admin`` with JSON ``{"health": bool, "ready": bool, "slow-ms": number,
  "fail-requests": bool, "cpu": number | null}`` changes the switches; ``GET /admin`` shows
  them with the request counts. Every response names the instance in ``X-Instance-Id``,
  which an SCI must not pass on to clients.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from agents.common.http import StartResponse, read_body, respond
from agents.service_instance.prefill import PrefillEngine, PrefillSettings, prompt

MAX_PROMPT_BODY = 1 << 20
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
DISTRIBUTIONS = ("fixed", "uniform", "exponential")


@dataclass(frozen=True, slots=True)
class ServiceTime:
    """A service time distribution in milliseconds: fixed, uniform (mean +- spread) or
    exponential (mean)."""

    distribution: str = "fixed"
    mean_ms: float = 10.0
    spread_ms: float = 0.0

    def draw(self, rng: random.Random) -> float:
        """One service time."""
        if self.distribution == "exponential":
            return rng.expovariate(1 / self.mean_ms) if self.mean_ms > 0 else 0.0
        if self.distribution == "uniform":
            return max(
                0.0, rng.uniform(self.mean_ms - self.spread_ms, self.mean_ms + self.spread_ms)
            )
        return self.mean_ms


@dataclass(frozen=True, slots=True)
class Switches:
    """The admin switches (failure injection)."""

    health: bool = True
    ready: bool = True
    slow_ms: float = 0.0
    fail_requests: bool = False
    cpu: float | None = None


@dataclass(frozen=True, slots=True)
class InstanceSettings:
    """What ``catsctl service-instance`` was given; with ``prefill``, a POST is an LLM
    prompt served by the prefill model (:mod:`agents.service_instance.prefill`)."""

    name: str
    capacity: int
    service_time: ServiceTime
    queue: int = 0
    prefill: PrefillSettings | None = None


def switches_from(document: Any, current: Switches) -> Switches:
    """New switches from an admin request body.

    Raises:
        ValueError: when a member is unknown or has the wrong type.
    """
    if not isinstance(document, dict):
        raise ValueError("the admin body is a JSON object")
    kinds: dict[str, tuple[type[Any], ...]] = {
        "health": (bool,),
        "ready": (bool,),
        "slow-ms": (int, float),
        "fail-requests": (bool,),
        "cpu": (int, float, type(None)),
    }
    changes: dict[str, Any] = {}
    members: dict[str, Any] = document
    for key, given in members.items():
        if key not in kinds or not isinstance(given, kinds[key]):
            raise ValueError(f"bad admin member {key!r}: {given!r}")
        if isinstance(given, int | float) and not isinstance(given, bool):
            changes[key.replace("-", "_")] = float(given)
        else:
            changes[key.replace("-", "_")] = given
    return replace(current, **changes)


class ServiceInstance:
    """The WSGI application of one service instance."""

    def __init__(self, settings: InstanceSettings, seed: int | None = None) -> None:
        self.settings = settings
        self._rng = random.Random(seed)
        self._cond = threading.Condition()
        self._active = 0
        self._waiting = 0
        self._switches = Switches()
        self.registry = CollectorRegistry()
        r = self.registry
        self._g_active = Gauge("cats_si_active_sessions", "requests being served", registry=r)
        self._g_capacity = Gauge("cats_si_max_capacity", "concurrent slots", registry=r)
        self._g_queue = Gauge("cats_si_queue_depth", "requests waiting for a slot", registry=r)
        self._g_cpu = Gauge("cats_si_cpu_utilization_percent", "busy slots, %", registry=r)
        self._g_memory = Gauge("cats_si_memory_utilization_percent", "memory, %", registry=r)
        self._g_load = Gauge("cats_si_load_average", "active plus waiting requests", registry=r)
        self._requests = Counter("cats_si_requests", "requests answered", registry=r)
        self._errors = Counter("cats_si_errors", "requests answered 5xx", registry=r)
        self._time = Histogram(
            "cats_si_response_time_seconds", "service time", buckets=BUCKETS, registry=r
        )
        self._g_capacity.set(settings.capacity)
        self._engine = None if settings.prefill is None else PrefillEngine(settings.prefill)

    def _acquire(self) -> bool:
        with self._cond:
            if self._active >= self.settings.capacity:
                if self._waiting >= self.settings.queue:
                    return False
                self._waiting += 1
                while self._active >= self.settings.capacity:
                    self._cond.wait()
                self._waiting -= 1
            self._active += 1
            return True

    def _release(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", "/"), environ.get("REQUEST_METHOD", "GET")
        ident = [("X-Instance-Id", self.settings.name)]
        switches = self._switches
        if path == "/metrics":
            return respond(
                start_response, "200 OK", self._exposition(), "text/plain; version=0.0.4", ident
            )
        if path in ("/health", "/ready"):
            up = switches.health if path == "/health" else switches.ready and switches.health
            status = "200 OK" if up else "503 Service Unavailable"
            return respond(start_response, status, json.dumps({"up": up}).encode(), headers=ident)
        if path == "/admin":
            return self._admin(environ, method, start_response, ident)
        if self._engine is not None and method == "POST":
            return self._prefill(self._engine, environ, start_response, ident)
        return self._serve(start_response, ident)

    def _prefill(
        self,
        engine: PrefillEngine,
        environ: dict[str, Any],
        start_response: StartResponse,
        ident: list[tuple[str, str]],
    ) -> Iterable[bytes]:
        """An LLM prompt: wait for a slot and the engine, prefill, answer the first token."""
        try:
            blocks, length = prompt(json.loads(read_body(environ, MAX_PROMPT_BODY) or b"null"))
        except ValueError as exc:
            body = json.dumps({"error": str(exc)}).encode()
            return respond(start_response, "400 Bad Request", body, headers=ident)
        if not self._acquire():
            self._requests.inc()
            self._errors.inc()
            body = b'{"error": "at capacity"}'
            return respond(start_response, "503 Service Unavailable", body, headers=ident)
        began = time.perf_counter()
        try:
            served = engine.serve(blocks, length)
        finally:
            self._release()
        self._time.observe(time.perf_counter() - began)
        self._requests.inc()
        body = json.dumps({"result": "ok", **served.as_json()}).encode()
        return respond(start_response, "200 OK", body, headers=ident)

    def _serve(
        self, start_response: StartResponse, ident: list[tuple[str, str]]
    ) -> Iterable[bytes]:
        if not self._acquire():
            self._requests.inc()
            self._errors.inc()
            return respond(
                start_response,
                "503 Service Unavailable",
                b'{"error": "at capacity"}',
                headers=ident,
            )
        began = time.perf_counter()
        try:
            switches = self._switches
            with self._cond:
                delay = self.settings.service_time.draw(self._rng) + switches.slow_ms
            time.sleep(delay / 1000)
        finally:
            self._release()
        self._time.observe(time.perf_counter() - began)
        self._requests.inc()
        if switches.fail_requests:
            self._errors.inc()
            return respond(
                start_response, "500 Internal Server Error", b'{"error": "failing"}', headers=ident
            )
        body = json.dumps({"result": "ok", "service-time-ms": round(delay, 3)}).encode()
        return respond(
            start_response, "200 OK", body, headers=[*ident, ("Server", f"si/{self.settings.name}")]
        )

    def _exposition(self) -> bytes:
        with self._cond:
            active, waiting = self._active, self._waiting
        busy = 100.0 * active / max(1, self.settings.capacity)
        cpu = self._switches.cpu
        self._g_active.set(active)
        self._g_queue.set(waiting)
        self._g_cpu.set(busy if cpu is None else cpu)
        self._g_memory.set(20.0 + 0.6 * busy)
        self._g_load.set(active + waiting)
        return generate_latest(self.registry)

    def admin_state(self) -> dict[str, Any]:
        """The switches and counts (``GET /admin``)."""
        with self._cond:
            active = self._active
        return {
            "name": self.settings.name,
            **{k.replace("_", "-"): v for k, v in asdict(self._switches).items()},
            "active": active,
            "requests": int(self._requests._value.get()),
        }

    def _admin(
        self,
        environ: dict[str, Any],
        method: str,
        start_response: StartResponse,
        ident: list[tuple[str, str]],
    ) -> Iterable[bytes]:
        if method == "POST":
            try:
                document = json.loads(read_body(environ, 65536) or b"{}")
                with self._cond:
                    self._switches = switches_from(document, self._switches)
            except ValueError as exc:
                body = json.dumps({"error": str(exc)}).encode()
                return respond(start_response, "400 Bad Request", body, headers=ident)
        return respond(
            start_response, "200 OK", json.dumps(self.admin_state()).encode(), headers=ident
        )
