"""The C-SMA's reporting loop: report-service-metrics to the C-PS (service-metrics-op 6.1, 8).

Each interval, and whenever an SCI report arrives (but no sooner than ``min-interval`` after
the last report, so that a burst of SCI reports coalesces), the loop takes the site's entries and
sends what :func:`agents.csma.thresholds.plan` calls for: a full report at start and after
the C-PS was unreachable, deltas of what crossed a threshold, a heartbeat (or full report)
every heartbeat interval, and nothing otherwise. Sequence numbers persist in the state
directory before the report leaves (agents.common.sequence), so a restarted C-SMA resumes
above them. A C-PS cluster gets one loop per replica (each with its own transport, backoff and
acknowledged entries) drawing on one store: each replica sees an increasing part of the one
sequence, which is all the C-PS's per-sender check asks. A refused report is logged item by
item (the rpc-error) and its changes are offered again; an unreachable C-PS is retried with
exponential backoff.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from agents.common.restconf import RefusedError, Transport, UnreachableError
from agents.common.sequence import SequenceStore
from agents.csma.config import Reporting
from agents.csma.report import MODULE, OPERATION, service_report
from agents.csma.thresholds import Plan, ReportType, plan
from agents.csma.values import Entry, EntryKey

LOG = logging.getLogger("agents.csma.reporter")
MAX_BACKOFF_S = 30.0
#: Entries of the site as they stand now (aggregated or per SCI).
Snapshot = Callable[[], Mapping[EntryKey, Entry]]


@dataclass(frozen=True, slots=True)
class Counters:
    """What the loop sent and how it went."""

    full: int = 0
    delta: int = 0
    heartbeat: int = 0
    refused: int = 0
    unreachable: int = 0
    last_sequence: int = 0


class Reporter:
    """The loop; ``wake`` asks for a look now, ``stop`` ends it."""

    def __init__(
        self,
        reporting: Reporting,
        site: str,
        snapshot: Snapshot,
        transport: Transport,
        store: SequenceStore,
    ) -> None:
        self.reporting, self._site = reporting, site
        self.peer = "C-PS"  # the replica's URL in a cluster's logs
        self._snapshot, self._transport, self._store = snapshot, transport, store
        self.stop, self.wake = threading.Event(), threading.Event()
        self._acknowledged: dict[EntryKey, Entry] | None = None
        self._last_refresh = float("-inf")
        self._backoff = 0.0
        self._sent = 0
        self.counters = Counters()

    def run(self) -> None:
        """Report until ``stop`` is set."""
        try:
            while not self.stop.is_set():
                sent = self._sent
                self.tick()
                if self._sent != sent:  # changes arriving now coalesce into the next report
                    self.stop.wait(self.reporting.min_interval)
                self.wake.wait(self._backoff or self.reporting.interval)
                self.wake.clear()
        finally:
            self._transport.close()

    def tick(self) -> None:
        """One look at the cache: send the report due, if any."""
        reporting = self.reporting
        due = time.monotonic() - self._last_refresh >= reporting.heartbeat
        planned = plan(
            self._acknowledged,
            self._snapshot(),
            reporting.thresholds,
            heartbeat_due=due,
            heartbeat_full=reporting.heartbeat_full,
        )
        if planned is not None:
            self._send(planned)

    def _send(self, planned: Plan) -> None:
        bound_ms = int(self.reporting.heartbeat * 3 * 1000)  # the C-PS's default expiry (8)
        sequence = self._store.next()
        self._sent += 1
        members = service_report(sequence, datetime.now(UTC), planned, self._site, bound_ms)
        try:
            output = self._transport.invoke(MODULE, OPERATION, members)
        except UnreachableError as exc:
            self._acknowledged = None  # the C-PS may have restarted: the next report is full
            self._backoff = min(MAX_BACKOFF_S, max(self._backoff * 2, 0.5))
            self.counters = replace(self.counters, unreachable=self.counters.unreachable + 1)
            LOG.warning("%s unreachable, retry in %.1f s: %s", self.peer, self._backoff, exc)
            return
        except RefusedError as exc:
            for item in exc.items:
                LOG.error("report-service-metrics %s refused by %s: %s", sequence, self.peer, item)
            if exc.items[0].app_tag in {"sequence-not-increasing", "sequence-number-regressed"}:
                self._store.advance()  # an old state directory: continue from the clock
            self._acknowledged = None  # offer everything again, in a full report
            self._backoff = min(MAX_BACKOFF_S, max(self._backoff * 2, 1.0))
            self.counters = replace(self.counters, refused=self.counters.refused + 1)
            return
        self._backoff = 0.0
        self._acknowledged = planned.acknowledged(self._acknowledged)
        if planned.kind in (ReportType.FULL, ReportType.HEARTBEAT):
            self._last_refresh = time.monotonic()
        self._count(planned.kind, sequence)
        for refused in output.get("refused-entry", ()):
            LOG.warning("entry refused by %s: %s", self.peer, refused)
        LOG.info(
            "report %s %s to %s: %d entries, %s accepted",
            sequence,
            planned.kind.value,
            self.peer,
            len(planned.entries),
            output.get("accepted-entries"),
        )

    def _count(self, kind: ReportType, sequence: int) -> None:
        c = self.counters
        self.counters = replace(
            c,
            full=c.full + (kind is ReportType.FULL),
            delta=c.delta + (kind is ReportType.DELTA),
            heartbeat=c.heartbeat + (kind is ReportType.HEARTBEAT),
            last_sequence=sequence,
        )
