"""The forwarding state of one forwarder: table, counters, pinned flows and running steps.

:class:`Forwarding` is the data plane's memory, behind one lock and without I/O: ``install``
takes a new steering configuration (a commit), ``steer`` decides a request (flow affinity
first, service-metrics-op 6.2.4; then :func:`select.lookup`), ``done`` closes it, ``sweep``
expires entries, releases idle flows and detects tail events; the last three return the
notifications to publish (ietf-cats-steering rule-expired, step-progress).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from agents.forwarder import render
from agents.forwarder.render import Counters, Totals
from agents.forwarder.select import Route, local_choice, lookup, route
from agents.forwarder.table import (
    Accepted,
    Reach,
    Table,
    accept,
    build,
    newly_expired,
    rebuild,
    update,
)
from agents.forwarder.values import EntryKey, Kind, Locator, Request, Rule, Steering
from controller.types import CommitmentId, CsId, ForwarderId, Json

FlowKey = tuple[object, ...]


@dataclass(frozen=True, slots=True)
class Pin:
    """A flow held on its target by flow affinity."""

    key: EntryKey
    route: Route
    last_seen: float


@dataclass(frozen=True, slots=True)
class Ticket:
    """One request on its way: what steered it and where it goes."""

    number: int
    key: EntryKey | None
    route: Route
    flow: FlowKey
    request: Request
    started: float  # time.monotonic()
    commitment_id: str | None = None


@dataclass(frozen=True, slots=True)
class Watched:
    """A running request of a rule with progress-monitoring (agent draft 8.1 P10)."""

    ticket: Ticket
    rule: Rule
    reported: bool = False


@dataclass(frozen=True, slots=True)
class Installed:
    """What an install did: the entries re-sent unchanged, and the acceptance times a
    restart needs (:func:`ledger_part`) that it moved (None: no longer needed)."""

    repeated: tuple[EntryKey, ...]
    ledger: dict[EntryKey, Accepted | None] = field(default_factory=dict)

    @property
    def accepted_changed(self) -> bool:
        """Whether the install moved an acceptance time that a restart needs."""
        return bool(self.ledger)


class Forwarding:
    """Table, counters, pins and watched requests of one forwarder, behind one lock."""

    def __init__(
        self,
        reach: Reach,
        tunnels: Mapping[str, Locator],
        default_routes: Mapping[str, Locator],
        now: float,
        accepted: Mapping[EntryKey, Accepted] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._reach, self._tunnels, self._defaults = reach, dict(tunnels), dict(default_routes)
        self._table = Table(accepted=dict(accepted or {}))
        self._counters: dict[EntryKey, Counters] = {}
        self._pins: dict[FlowKey, Pin] = {}
        self._watched: dict[int, Watched] = {}
        self._totals = Totals(now, now)
        self._numbers = itertools.count(1)
        self._turn = itertools.count()

    @property
    def table(self) -> Table:
        """The current table (a frozen value)."""
        with self._lock:
            return self._table

    # -- configuration ---------------------------------------------------------------------

    def install(
        self,
        steering: Steering,
        now: float,
        touched: Iterable[EntryKey] = (),
        *,
        whole: bool = True,
    ) -> tuple[Installed, list[Json]]:
        """Apply a committed configuration: the whole of it, or (``whole`` False) a change of
        the entries ``touched`` only; ``touched`` are also the entries the edit named."""
        keys = tuple(touched)
        reach = replace(self._reach, forwarder_id=steering.forwarder_id or self._reach.forwarder_id)
        with self._lock:
            before = self._table
            changed = changed_entries(before.steering, steering) if whole else keys
            large = len(changed) * 8 > len(before.status) + len(changed)
            if large or reach != self._reach:  # the identity decides network-only
                accepted = accept(before.accepted, steering, now)
                table = build(steering, accepted, now, reach, before.status)
                expired = newly_expired(before, table)
            else:
                table = update(before, steering, changed, now, reach)
                expired = newly_expired(before, table, changed)
            repeated = tuple(
                key
                for key in keys
                if key.kind is Kind.RULE
                and (old := before.steering.rules.get(CommitmentId(key.name))) is not None
                and (new := steering.rules.get(CommitmentId(key.name))) is not None
                and old.fingerprint == new.fingerprint
            )
            for key in repeated:
                self._count(key, repeated=1)
            for key in [k for k in changed if k not in table.status and k in self._counters]:
                del self._counters[key]
            notes = self._expired(table, expired)
            self._table, self._reach = table, reach
            self._totals = replace(self._totals, last_change=now)
            moved = _ledger_moved(before, table, changed)
        return Installed(repeated, moved), notes

    def _count(self, key: EntryKey, **add: int) -> None:
        old = self._counters.get(key, Counters())
        self._counters[key] = replace(old, **{k: getattr(old, k) + v for k, v in add.items()})

    def _expired(self, table: Table, keys: list[EntryKey]) -> list[Json]:
        """Count expirations and build their notifications (under the lock)."""
        notes = []
        for key in keys:
            if key.kind is Kind.SERVICE:
                self._count(key, expirations=1)
                self._totals = replace(
                    self._totals, service_expirations=self._totals.service_expirations + 1
                )
            else:
                self._totals = replace(
                    self._totals, rule_expirations=self._totals.rule_expirations + 1
                )
            notes.append(render.rule_expired(table, key, self._counters.get(key, Counters())))
        return notes

    # -- the data plane --------------------------------------------------------------------

    def steer(self, request: Request, now: float) -> Ticket:
        """Decide a request: its flow's pinned target, else the best matching entry."""
        with self._lock:
            table = self._table
            affinity = table.steering.affinity
            flow = request.flow_key()
            pin = self._pins.get(flow) if affinity.enabled else None
            timeout = affinity.flow_timeout
            key: EntryKey | None = None
            if pin is not None and (timeout == 0 or now - pin.last_seen < timeout):
                self._pins[flow] = replace(pin, last_seen=now)
                key, chosen, new_flow = pin.key, pin.route, False
            else:
                entry = lookup(table, request, now)
                chosen = route(entry, request.cs_id, self._tunnels, self._defaults)
                key, new_flow = (entry.key if entry is not None else None), True
                if key is not None and chosen.base_url is not None and affinity.enabled:
                    self._pins[flow] = Pin(key, chosen, now)
            rule = None
            if key is not None and key in table.status:
                self._count(key, packets=1, flows=int(new_flow))
                self._counters[key] = replace(self._counters[key], last_match=now)
                if key.kind is Kind.RULE:
                    rule = table.steering.rules.get(CommitmentId(key.name))
            ticket = Ticket(
                next(self._numbers),
                key,
                chosen,
                flow,
                request,
                time.monotonic(),
                rule.commitment_id if rule is not None else None,
            )
            if rule is not None and rule.progress is not None:
                self._watched[ticket.number] = Watched(ticket, rule)
        return ticket

    def done(self, ticket: Ticket, size: int, *, failed: bool = False) -> None:
        """A request ended: count its bytes; a failed target releases the flow (re-routing,
        service-metrics-op 6.2.5), so its next request is looked up anew."""
        with self._lock:
            self._watched.pop(ticket.number, None)
            if ticket.key is not None and ticket.key in self._table.status:
                self._count(ticket.key, bytes=size)
            if failed:
                self._pins.pop(ticket.flow, None)

    def local_route(self, cs_id: str, now: float) -> Route:
        """At the egress: a local CSCI-ID of the service (network-only steering)."""
        with self._lock:
            table = self._table
            service = table.steering.services.get(CsId(cs_id))
            status = table.status.get(service.key) if service is not None else None
            live = status is not None and (status.expires_at is None or status.expires_at > now)
            return local_choice(service if live else None, next(self._turn))

    # -- time ------------------------------------------------------------------------------

    def sweep(self, now: float, monotonic: float, forwarder: ForwarderId | None) -> list[Json]:
        """Expire due entries, release idle flows, report tail events."""
        notes: list[Json] = []
        with self._lock:
            table = self._table
            if table.next_due is not None and now >= table.next_due:
                table, expired = rebuild(table, now, self._reach)
                notes.extend(self._expired(table, expired))
                self._table = table
                self._totals = replace(self._totals, last_change=now)
            affinity = table.steering.affinity
            if not affinity.enabled:
                self._pins.clear()
            elif affinity.flow_timeout > 0:
                limit = affinity.flow_timeout
                idle = [f for f, p in self._pins.items() if now - p.last_seen >= limit]
                for flow in idle:
                    del self._pins[flow]
            for number, watched in list(self._watched.items()):
                progress = watched.rule.progress
                elapsed = monotonic - watched.ticket.started
                if watched.reported or progress is None or elapsed <= progress.threshold_s:
                    continue
                self._watched[number] = replace(watched, reported=True)
                self._totals = replace(self._totals, tail_events=self._totals.tail_events + 1)
                notes.append(
                    render.step_progress(
                        forwarder, watched.rule, watched.ticket.request, elapsed * 1000, now
                    )
                )
        return notes

    def state(self) -> Json:
        """The ``steering`` state (counters and summary)."""
        with self._lock:
            flows: dict[EntryKey, int] = {}
            for pin in self._pins.values():
                flows[pin.key] = flows.get(pin.key, 0) + 1
            return render.state(self._table, dict(self._counters), flows, self._totals)


def changed_entries(before: Steering, after: Steering) -> tuple[EntryKey, ...]:
    """The entries added, removed or revised between two configurations."""
    old, new = before.entries(), after.entries()
    return tuple(
        key
        for key in old.keys() | new.keys()
        if (a := old.get(key)) is None
        or (b := new.get(key)) is None
        or a.fingerprint != b.fingerprint
    )


def ledger_part(table: Table) -> dict[EntryKey, Accepted]:
    """The acceptance times a restart needs: of entries without ``installed-at``."""
    entries = table.steering.entries()
    return {
        key: accepted
        for key, accepted in table.accepted.items()
        if key in entries and entries[key].expiry.installed_at is None
    }


def ledger_value(table: Table, key: EntryKey) -> Accepted | None:
    """The acceptance time of one entry that a restart needs (:func:`ledger_part`)."""
    entry = table.steering.entry(key)
    if entry is None or entry.expiry.installed_at is not None:
        return None
    return table.accepted.get(key)


def _ledger_moved(
    before: Table, after: Table, keys: Iterable[EntryKey]
) -> dict[EntryKey, Accepted | None]:
    """The changed entries whose :func:`ledger_value` moved, with the new value."""
    moved: dict[EntryKey, Accepted | None] = {}
    for key in keys:
        value = ledger_value(after, key)
        if value != ledger_value(before, key):
            moved[key] = value
    return moved
