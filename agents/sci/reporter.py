"""Reporting Interface loop: heartbeat, threshold and event reports to the C-SMA (7.1-7.3).

Each tick takes a snapshot, finds the triggers, asks :func:`agents.sci.reporting.decide`
and, when a report is due, numbers it, checks it against the schema and sends it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agents.common.sequence import SequenceStore
from agents.sci.errors import SciError
from agents.sci.report import ReportContent, build_report, envelope
from agents.sci.reporting import (
    EVENT_TRIGGERS,
    HEARTBEAT,
    RateWindow,
    Sent,
    decide,
    event_triggers,
    threshold_triggers,
)
from agents.sci.runtime import Runtime
from controller.model import InstanceKind, ModelError, Schema
from controller.types import Json

LOG = logging.getLogger("agents.sci.reporter")
Send = Callable[[Json], int]


@dataclass(frozen=True, slots=True)
class ReporterState:
    """What the Reporting Interface remembers between ticks."""

    last: Sent | None = None
    window: RateWindow = field(default_factory=RateWindow)
    pending: frozenset[str] = frozenset()
    last_time: float | None = None
    accepted: int | None = None
    limited: bool = False


class Reporter:
    """The Reporting Interface of one SCI; :meth:`tick` is called by one thread."""

    def __init__(
        self, runtime: Runtime, sequence: SequenceStore, send: Send, schema: Schema
    ) -> None:
        self._runtime = runtime
        self._sequence = sequence
        self._send = send
        self._schema = schema
        self._state = ReporterState()
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()

    @property
    def state(self) -> ReporterState:
        """The current state (for the SCI's own state data)."""
        with self._lock:
            return self._state

    def tick(self, now: float) -> str | None:
        """Send a report if one is due; the kind sent, or None."""
        runtime, settings = self._runtime, self._runtime.config.reporting
        state = self._state
        snapshot = runtime.snapshot(now)
        current = snapshot.aggregate
        last = None if state.last is None else state.last.aggregate
        found = threshold_triggers(last, current, settings)
        found |= event_triggers(last, current, runtime.take_recovered(), settings)
        found |= state.pending
        if now - runtime.last_transition() < batch_window(runtime) and not found & EVENT_TRIGGERS:
            found -= {"instance-health-change"}  # batch rapid health changes (5.3)
        decision = decide(now, state.last, state.window, found, settings)
        events = found & EVENT_TRIGGERS  # consumed only when sent
        if decision.kind is None:
            if decision.rate_limited and not state.limited:
                self.counts["rate-limited"] += 1
            self._set(replace(state, pending=events, limited=decision.rate_limited))
            return None
        sequence = self._sequence.next()
        content = ReportContent(
            now,
            sequence,
            decision.kind,
            decision.triggers,
            snapshot.gas,
            snapshot.computing_time,
            snapshot.instances,
        )
        members = build_report(runtime.config, content)
        window = state.window.after(now, settings.rate_interval_ms / 1000)
        try:
            self._schema.validate(json.dumps(envelope(members)), InstanceKind.RPC)
            accepted = self._send(members)
        except (SciError, ModelError) as exc:
            self.counts["failed"] += 1
            LOG.error("report %d (%s) not delivered: %s", sequence, decision.kind, exc)
            self._set(replace(state, window=window, pending=events, limited=False))
            return None
        self.counts[decision.kind] += 1
        beat = HEARTBEAT in decision.triggers or state.last is None
        heartbeat_at = now if beat or state.last is None else state.last.heartbeat_at
        LOG.info(
            "report %d %s gas=%d ct=%s triggers=%s",
            sequence,
            decision.kind,
            snapshot.gas,
            current.computing_time,
            ",".join(sorted(decision.triggers)),
        )
        self._set(
            ReporterState(Sent(current, now, heartbeat_at), window, frozenset(), now, accepted)
        )
        return decision.kind

    def _set(self, state: ReporterState) -> None:
        with self._lock:
            self._state = state


def batch_window(runtime: Runtime) -> float:
    """The health batch window in seconds (5.3)."""
    return runtime.config.aggregation.health_batch_window_ms / 1000
