"""The SCI's management interface: pushed metrics in, its own state and notifications out.

Separate from the client-facing interface, so clients never see instance details (8.1):

- ``POST /push/{si-id}``: a Prometheus text exposition for an instance (4.2 Push-based);
  204, or 400 / 404 / 413 with the reason;
- ``GET /state``: ``ietf-cats-sci:sci`` state data (RFC 7951 JSON);
- ``GET /notifications``: the recent ``instance-health-changed`` notifications.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from agents.common.http import StartResponse, read_body, respond
from agents.sci.collector import MAX_EXPOSITION, parse_exposition
from agents.sci.errors import SciError
from agents.sci.report import health_summary, instance_json, rfc3339
from agents.sci.reporter import Reporter
from agents.sci.runtime import Runtime
from agents.sci.values import SiId
from controller.types import Json


def _counter(value: int) -> str:
    return str(value)


def state_json(runtime: Runtime, reporter: Reporter | None, now: float) -> Json:
    """``sci/state`` and ``service-instance/state`` of the running SCI, under its ``csci-id``
    (so that a client can tell this SCI from another program on the port)."""
    snapshot = runtime.snapshot(now)
    affinity = runtime.sessions.counts()
    counts = runtime.dispatch_counts
    state: Json = {
        "gas": snapshot.gas,
        "health-summary": health_summary([i.health for i in snapshot.instances]),
        "affinity": {
            "flow-bindings": affinity.flow_bindings,
            "session-bindings": affinity.session_bindings,
            "bindings-expired": _counter(affinity.expired),
            "bindings-rebound": _counter(affinity.rebound),
        },
        "dispatch": {
            name: _counter(counts[name])
            for name in (
                "dispatched",
                "dispatched-degraded",
                "queued",
                "queue-timeouts",
                "rejected",
            )
        },
        "discontinuity-time": rfc3339(runtime.started),
    }
    if snapshot.computing_time is not None:
        state["computing-time"] = f"{snapshot.computing_time.value:.3f}"
    if reporter is not None:
        report = reporter.state
        state["reporting"] = {
            "heartbeat-reports": _counter(reporter.counts["heartbeat"]),
            "threshold-reports": _counter(reporter.counts["threshold"]),
            "event-reports": _counter(reporter.counts["event"]),
            "rate-limited": _counter(reporter.counts["rate-limited"]),
            "failed-reports": _counter(reporter.counts["failed"]),
        }
        if report.last_time is not None:
            state["reporting"]["last-report-time"] = rfc3339(report.last_time)
        if report.accepted is not None:
            state["reporting"]["last-accepted-sequence-number"] = str(report.accepted)
    bindings = runtime.sessions.bindings_per_instance()
    instances = []
    for detail in snapshot.instances:
        monitor = runtime.instance_health(detail.si_id)
        entry = instance_json(detail)
        metrics = {
            k: v
            for k, v in entry.items()
            if k not in ("si-id", "health", "max-capacity", "available-slots")
        }
        instances.append(
            {
                "si-id": detail.si_id,
                "state": {
                    "health": detail.health.value,
                    "health-since": rfc3339(monitor.since),
                    "consecutive-failures": monitor.consecutive_failures,
                    "consecutive-passes": monitor.consecutive_passes,
                    "available-slots": detail.available_slots,
                    "metrics": metrics,
                    "affinity-bindings": bindings.get(detail.si_id, 0),
                    "dispatched-requests": _counter(runtime.per_instance[detail.si_id]),
                },
            }
        )
    sci: Json = {"csci-id": runtime.config.csci_id, "state": state, "service-instance": instances}
    return {"ietf-cats-sci:sci": sci}


class Manage:
    """The WSGI application of the management interface."""

    def __init__(self, runtime: Runtime, reporter: Reporter | None) -> None:
        self._runtime = runtime
        self._reporter = reporter
        self._ids = {item.si_id for item in runtime.config.instances}

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", "/"), environ.get("REQUEST_METHOD", "GET")
        if path == "/state" and method == "GET":
            body = json.dumps(state_json(self._runtime, self._reporter, time.time()))
            return respond(start_response, "200 OK", body.encode(), "application/yang-data+json")
        if path == "/notifications" and method == "GET":
            body = json.dumps({"notifications": list(self._runtime.notifications)})
            return respond(start_response, "200 OK", body.encode())
        if path.startswith("/push/") and method == "POST":
            return self._push(SiId(path.removeprefix("/push/")), environ, start_response)
        return respond(start_response, "404 Not Found", b'{"error": "no such resource"}')

    def _push(
        self, si_id: SiId, environ: dict[str, Any], start_response: StartResponse
    ) -> Iterable[bytes]:
        if si_id not in self._ids:
            return _error(start_response, "404 Not Found", f"no service instance {si_id!r}")
        try:
            text = read_body(environ, MAX_EXPOSITION).decode("utf-8")
            scrape = parse_exposition(text, time.time())
        except ValueError as exc:  # includes UnicodeDecodeError and an oversized body
            return _error(start_response, "400 Bad Request", f"malformed exposition: {exc}")
        except SciError as exc:
            return _error(start_response, "400 Bad Request", str(exc.items[0].message))
        self._runtime.record_scrape(si_id, scrape)
        start_response("204 No Content", [])
        return []


def _error(start_response: StartResponse, status: str, message: str) -> list[bytes]:
    return respond(start_response, status, json.dumps({"error": message}).encode())
