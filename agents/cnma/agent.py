"""The C-NMA process: compute the NST, report it on change and on heartbeat (service-metrics-op 8).

Every ``interval`` the agent rebuilds the NST from the topology (6.2.2), applies the probes'
measurements, and sends what :func:`agents.cnma.report.plan` calls for: a full report at start,
after a path disappeared, after the C-PS was unreachable and at every heartbeat; a delta report
of the paths whose change crossed the thresholds; nothing otherwise. A refused report (an
rpc-error) is logged and its changes are offered again next interval; an unreachable C-PS is
retried with exponential backoff and then gets a full report. With ``forwarding-view`` on, the
agent also sends advertise-forwarding-view (MSG-7) on change and at each heartbeat; a C-PS that
does not serve it (operation-not-supported) is logged once and asked again only at heartbeats.
SIGHUP reloads the configuration file; a file with errors is refused and the agent keeps going.

A C-PS cluster (``[cps] replica-url``, docs/cluster.md) gets one loop per replica
(:func:`per_replica`), each with its own transport, backoff, acknowledged paths and view, so
that a replica that fails or is slow delays no other; the loops draw on one sequence store
(each replica sees an increasing part of the one sequence). Each loop computes its own NST,
so the probes run once per replica.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from agents.cnma import forwarding, report
from agents.cnma.config import CnmaConfig, load_config
from agents.cnma.paths import PathKey, PathMetrics, endpoint_costs, network_service_table
from agents.cnma.probe import Measurement, Probe, apply, measure
from agents.common.config import ConfigError
from agents.common.readiness import serving
from agents.common.restconf import RefusedError, Transport, UnreachableError
from agents.common.sequence import SequenceStore
from controller.selection.units import Micros

LOG = logging.getLogger("agents.cnma")
MAX_BACKOFF_S = 30.0
Loader = Callable[[], CnmaConfig]
Connect = Callable[[CnmaConfig], Transport]


@dataclass(frozen=True, slots=True)
class Cycle:
    """The NST of one interval, with the sample counts of the probed paths."""

    table: dict[PathKey, PathMetrics]
    samples: dict[PathKey, int]
    collected_at: datetime


def compute(config: CnmaConfig, probe: Callable[[Probe], Measurement] = measure) -> Cycle:
    """The modelled NST with each probed path's measurement applied (probe.py precedence)."""
    table = network_service_table(config.topology, config.policy)
    samples: dict[PathKey, int] = {}
    for each in config.probes:
        if each.key not in table:
            continue
        measured = probe(each)
        if not measured.round_trips:
            LOG.warning("probe %s -> %s: no valid reply, modelled values kept", *each.key)
        samples[each.key] = len(measured.round_trips)
        table[each.key] = apply(table[each.key], measured, each.use)
    return Cycle(table, samples, datetime.now(UTC))


class Agent:
    """The reporting loop; ``wake`` interrupts a wait, ``stop`` and ``reload`` say why."""

    def __init__(
        self, load: Loader, connect: Connect, store: SequenceStore, config: CnmaConfig
    ) -> None:
        self._load, self._connect, self._store = load, connect, store
        self.config = config
        self.stop, self.reload, self.wake = threading.Event(), threading.Event(), threading.Event()
        self._transport = connect(config)
        self._acknowledged: dict[PathKey, PathMetrics] | None = None
        self._last_full = float("-inf")
        self._last_view: forwarding.ViewInputs | None = None
        self._view_unsupported = False
        self._backoff = 0.0

    def run(self) -> int:
        """Report until ``stop`` is set; returns the exit status."""
        cps = self.config.cps
        where = f"netconf {cps.netconf[0]}:{cps.netconf[1]}" if cps.netconf else cps.url
        LOG.info("c-nma %s reporting to %s", self.config.source, where)
        serving()
        try:
            while not self.stop.is_set():
                started = time.monotonic()
                if self.reload.is_set():
                    self.reload_now()
                self.tick()
                delay = self._backoff or self.config.reporting.interval
                self.wake.wait(max(0.0, delay - (time.monotonic() - started)))
                self.wake.clear()
        finally:
            self._transport.close()
        return 0

    @property
    def backoff(self) -> float:
        """Seconds to wait before the next attempt after a failure (0 when the last succeeded)."""
        return self._backoff

    def reload_now(self) -> None:
        """Reload the configuration file; a file with errors is logged and the old one kept."""
        self.reload.clear()
        try:
            loaded = self._load()
        except ConfigError as exc:
            for item in exc.items:
                LOG.error("reload refused, configuration kept: %s", item)
            return
        if loaded.cps != self.config.cps:
            self._transport.close()
            self._transport = self._connect(loaded)
        self.config = loaded
        LOG.info("configuration reloaded")

    def tick(self) -> None:
        """One interval: compute, then send what the plan and the view call for."""
        cycle = compute(self.config)
        heartbeat_due = time.monotonic() - self._last_full >= self.config.reporting.heartbeat
        planned = report.plan(
            self._acknowledged,
            cycle.table,
            self.config.reporting.thresholds,
            heartbeat_due=heartbeat_due,
        )
        sent = planned is None or self._send_report(planned, cycle)
        if sent and self.config.reporting.forwarding_view:
            self._send_view(cycle, heartbeat_due=heartbeat_due)

    def _metadata(self, cycle: Cycle) -> report.Metadata:
        bound = Micros(int(self.config.reporting.heartbeat * 3 * 1_000_000))  # 3x heartbeat
        return report.Metadata(cycle.collected_at, bound, self.config.source)

    def _send_report(self, planned: report.Plan, cycle: Cycle) -> bool:
        members = report.network_report(
            self._store.next(),
            datetime.now(UTC),
            planned,
            self.config.reporting.delay_unit,
            self._metadata(cycle),
        )
        try:
            output = self._transport.invoke(report.MODULE, report.OPERATION, members)
        except UnreachableError as exc:
            self._acknowledged = None  # the C-PS may have restarted: the next report is full
            self._backoff = min(MAX_BACKOFF_S, max(self._backoff * 2, 0.5))
            LOG.warning(
                "C-PS %s unreachable, retry in %.1f s: %s", self.config.cps.url, self._backoff, exc
            )
            return False
        except RefusedError as exc:
            for item in exc.items:
                LOG.error("report-network-metrics %s refused: %s", members["sequence-number"], item)
            if exc.items[0].app_tag == "sequence-not-increasing":
                self._store.advance()  # an old state directory: continue from the clock
            self._backoff = min(MAX_BACKOFF_S, max(self._backoff * 2, 1.0))
            return False
        self._backoff = 0.0
        self._acknowledged = planned.acknowledged(self._acknowledged)
        if planned.kind is report.ReportType.FULL:
            self._last_full = time.monotonic()
        for refused in output.get("refused-path", ()):
            LOG.warning("path refused by the C-PS: %s", refused)
        LOG.info(
            "report %s %s: %d paths, %s accepted",
            members["sequence-number"],
            planned.kind.value,
            len(planned.paths),
            output.get("accepted-entries"),
        )
        return True

    def _send_view(self, cycle: Cycle, *, heartbeat_due: bool) -> None:
        topology = self.config.topology
        costs = endpoint_costs(topology, self.config.policy)
        table = self._acknowledged or cycle.table  # the paths as the C-PS has them
        view = forwarding.ViewInputs(topology, table, costs, cycle.samples)
        if view == self._last_view and not heartbeat_due:
            return
        if self._view_unsupported and not heartbeat_due:
            return
        members = forwarding.forwarding_view(
            view, self.config.source, self._store.next(), self._metadata(cycle)
        )
        if members is None:
            return
        try:
            self._transport.invoke(forwarding.MODULE, forwarding.OPERATION, members)
        except UnreachableError as exc:
            LOG.warning("advertise-forwarding-view not delivered: %s", exc)
            return
        except RefusedError as exc:
            if exc.tag == "operation-not-supported":
                if not self._view_unsupported:
                    LOG.warning("the C-PS does not serve advertise-forwarding-view: %s", exc)
                self._view_unsupported = True
                return
            for item in exc.items:
                LOG.error("advertise-forwarding-view refused: %s", item)
            self._last_view = view  # offered again on change or at the heartbeat
            return
        self._view_unsupported = False
        self._last_view = view
        count = len(members["candidate"])
        sequence, url = members["sequence-number"], self.config.cps.url
        LOG.info("forwarding view %s: %d candidates (to %s)", sequence, count, url)


def only(config: CnmaConfig, url: str) -> CnmaConfig:
    """The configuration of the loop that reports to the one replica at ``url``."""
    return replace(config, cps=config.cps.only(url))


def per_replica(
    load: Loader, connect: Connect, store: SequenceStore, config: CnmaConfig
) -> list[Agent]:
    """One loop per C-PS replica of ``config``; each reloads the file for its own replica
    (a replica added or removed takes a restart)."""

    def bound(url: str) -> Loader:
        return lambda: only(load(), url)

    return [Agent(bound(url), connect, store, only(config, url)) for url in config.cps.urls]


def run_all(loops: list[Agent]) -> int:
    """Run the first loop here and the others in threads, until the first one stops."""
    threads = [
        threading.Thread(target=loop.run, name=f"cnma-{number}", daemon=True)
        for number, loop in enumerate(loops[1:], start=1)
    ]
    for thread in threads:
        thread.start()
    try:
        return loops[0].run()
    finally:
        for loop in loops[1:]:
            loop.stop.set()
            loop.wake.set()
        for thread in threads:
            thread.join(timeout=30)


def reload_config(path: Path, overrides: Callable[[CnmaConfig], CnmaConfig]) -> Loader:
    """A loader that reads ``path`` and applies the command-line overrides."""
    return lambda: overrides(load_config(path))
