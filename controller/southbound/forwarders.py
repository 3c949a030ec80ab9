"""The C-PS's steering of its forwarders: inventory, re-evaluation, push, state.

:class:`SteeringService` is the running part the C-PS installer starts. A planner thread
follows the forwarder inventory in running (``ietf-cats-steering:forwarders``), keeps one
:class:`~controller.southbound.push.ForwarderWorker` per forwarder, and turns table changes
(:meth:`on_tables_changed`, from the C-PS's report handlers and sweeper) into the intended
service entries of the affected (CS-ID, ingress) pairs only: the fast selection of each pair
(service-metrics-op 6.2.3 step 7, 6.2.5 re-routing). Every ``reconcile-interval`` it
re-evaluates every pair (freshness and policy change with time, not only with reports). Agent
commitments enter through :meth:`intend_rule` / :meth:`withdraw_rule` (agent draft MSG-10).
The workers push only differences; :meth:`push` is the fan-out with a result per forwarder.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Principal,
    ReadRequest,
    ReadResult,
    Revision,
)
from controller.errors import CatsError
from controller.selection.joint import Outcome
from controller.selection.joint.tracking import TableChanges
from controller.southbound.intended import IntendedState
from controller.southbound.inventory import (
    FORWARDERS,
    MODULE,
    ForwarderSpec,
    Inventory,
    parse_inventory,
)
from controller.southbound.peer import PeerSettings
from controller.southbound.push import (
    ForwarderStatus,
    ForwarderWorker,
    Leader,
    Pushed,
    PushResults,
    PushSettings,
    SteeringSession,
    format_time,
    push_all,
    standalone,
)
from controller.southbound.session import ConfigSession
from controller.southbound.steering import Entry, same_content, service_entry, with_decision
from controller.types import CsId, DataPath, ForwarderId, Json

LOG = logging.getLogger("catsctl.southbound")
Pair = tuple[CsId, ForwarderId]
#: The fast selection of (CS-ID, ingress) pairs
#: (controller.service_metrics ServiceMetrics.steering_outcomes).
Outcomes = Callable[[Sequence[Pair]], list[Outcome]]


class Provenance(Protocol):
    """Where the decisions behind service entries are kept (controller.service_metrics)."""

    def steering_record(self, cs_id: CsId, ingress: ForwarderId, forwarder: str) -> str:
        """Keep the decision record of a new service entry; its decision-id."""
        ...

    def installed(self, forwarder: str, cs_id: CsId, entry: Json | None) -> None:
        """Note the entry now intended at a forwarder (None: none)."""
        ...


#: Opens the session to one forwarder (a ConfigSession; a fake in unit tests).
SessionFactory = Callable[[ForwarderSpec], SteeringSession]
CHUNK = 512  # pairs per evaluation under the C-PS's lock
NO_CHANGES = TableChanges()
#: A get-config of 100k rules or a commit of a thousand entries takes seconds, not 5.
SESSION = PeerSettings(timeout=60.0)


class RunningReader(Protocol):
    """What the service reads of the server core: running's revision and the inventory."""

    def revision(self, datastore: DatastoreName, path: DataPath | None) -> Revision:
        """The entity-tag of a datastore (its changes are what the planner follows)."""
        ...

    def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
        """A subtree of a datastore."""
        ...

    def reveal(self, secret: str) -> str:
        """The clear text of a stored forwarder password."""
        ...


def netconf_session(spec: ForwarderSpec) -> SteeringSession:
    """A persistent NETCONF session to the forwarder."""
    return ConfigSession((spec.address, spec.port), spec.credentials, SESSION)


def status_json(status: ForwarderStatus, intended: tuple[int, int], generation: int) -> Json:
    """The ``forwarder/state`` container of one forwarder (RFC 7951); ``generation`` is the
    forwarder's current intended generation: not in sync until a push acknowledged it."""
    state: Json = {
        "session": "connected" if status.connected else "disconnected",
        "in-sync": status.in_sync and status.acked >= generation,
        "pending-changes": status.pending,
        "intended-services": intended[0],
        "intended-rules": intended[1],
        "pushes": str(status.pushes),
        "edits": str(status.edits),
        "entries-written": str(status.entries_written),
        "failures": str(status.failures),
        "reconnects": str(status.reconnects),
        "repairs": str(status.repairs),
    }
    for name, value in (
        ("last-push", format_time(status.last_push)),
        ("last-reconcile", format_time(status.last_reconcile)),
        ("last-error", status.last_error),
        ("last-error-at", format_time(status.last_error_at)),
    ):
        if value is not None:
            state[name] = value
    return state


def push_notification(pushed: Pushed) -> Json:
    """The ``forwarder-push`` notification of a write (RFC 7951)."""
    body: Json = {
        "forwarder": pushed.forwarder,
        "result": "written" if pushed.error is None else "failed",
        "duration": f"{pushed.duration_ms:.3f}",
    }
    if pushed.written is not None:
        body["edits"] = pushed.written.edits
        body["entries"] = pushed.written.entries
    if pushed.error is not None:
        body["error"] = pushed.error
    return {"ietf-cats-steering:forwarder-push": body}


class SteeringService:
    """Planner thread plus one worker per configured forwarder (controller.app ``Hosted``)."""

    def __init__(  # noqa: PLR0913 - the seams of the planner, each a keyword but the first two
        self,
        core: Callable[[], RunningReader],
        outcomes: Outcomes,
        *,
        sessions: SessionFactory = netconf_session,
        settings: PushSettings | None = None,
        poll: float = 0.2,
        provenance: Provenance | None = None,
        publish: Callable[[Json], None] | None = None,
        leader: Leader = standalone,
    ) -> None:
        self._core = core
        self._leader = leader  # in a cluster, only the leader pushes (docs/cluster.md)
        self._publish = publish
        self._provenance = provenance
        self._outcomes = outcomes
        self._sessions = sessions
        self._settings = settings or PushSettings()
        self._poll = poll
        self.intended = IntendedState()
        self._cond = threading.Condition()
        self._pending = TableChanges()
        self._stopping = False
        self._etag: str | None = None
        self._inventory = Inventory()
        self._workers: dict[str, tuple[ForwarderSpec, ForwarderWorker]] = {}
        self._full_at = 0.0
        self._refreshing = threading.Lock()  # the planner and push() refresh one at a time
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the planner (it reads the inventory and starts the workers)."""
        self._thread = threading.Thread(target=self._run, name="steering-planner", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the planner and every worker (closing their sessions)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._cond:
            workers, self._workers = list(self._workers.values()), {}
        for _, worker in workers:
            worker.stop()

    def leadership_changed(self) -> None:
        """This replica became the cluster's leader or stopped being it: a new leader reads
        every forwarder and writes its term and the difference at once."""
        with self._cond:
            workers = [worker for _, worker in self._workers.values()]
        for worker in workers:
            worker.wake(reconcile=True)

    # -- inputs --------------------------------------------------------------------------------

    def on_tables_changed(self, changes: TableChanges) -> None:
        """The CST or NST changed (controller.service_metrics hook): re-evaluate the affected
        pairs."""
        with self._cond:
            self._pending = self._pending.merged(changes)
            self._cond.notify_all()

    def intend_rule(self, forwarder: str, rule: Json) -> bool:
        """Install or revise a commitment's rule at a forwarder (MSG-10); whether it changed."""
        changed = self.intended.intend_rule(forwarder, rule)
        if changed:
            self._wake(forwarder)
        return changed

    def withdraw_rule(self, forwarder: str, commitment_id: str) -> bool:
        """Remove a commitment's rule from a forwarder; whether it was intended."""
        changed = self.intended.withdraw_rule(forwarder, commitment_id)
        if changed:
            self._wake(forwarder)
        return changed

    def push(self, timeout: float = 10.0, forwarders: Sequence[str] | None = None) -> PushResults:
        """Bring every (or the named) forwarder to its intended state now; a result each."""
        self.refresh()
        with self._cond:
            chosen = [w for n, (_, w) in self._workers.items() if not forwarders or n in forwarders]
        return push_all(chosen, self.intended, timeout)

    # -- planner -------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._pending and not self._stopping:
                    self._cond.wait(self._poll)
                if self._stopping:
                    return
                changes, self._pending = self._pending, TableChanges()
            try:
                self.refresh(changes)
            except CatsError:
                LOG.exception("the steering re-evaluation failed")

    def refresh(self, changes: TableChanges = NO_CHANGES) -> None:
        """Follow the inventory, then re-evaluate the pairs ``changes`` concern (all of them
        every reconcile-interval) and wake the workers whose intended state changed."""
        with self._refreshing:
            self._refresh(changes)

    def _refresh(self, changes: TableChanges) -> None:
        added = self._follow_inventory()
        now = time.monotonic()
        full = now >= self._full_at
        if full:
            self._full_at = now + self._inventory.reconcile_interval
        specs = [spec for spec, _ in self._snapshot_workers()]
        wanted: list[tuple[str, Pair]] = [
            (spec.name, pair)
            for spec in specs
            for pair in spec.pairs()
            if full or spec.name in added or changes.concerns(*pair)
        ]
        changed: set[str] = set()
        for start in range(0, len(wanted), CHUNK):
            chunk = wanted[start : start + CHUNK]
            outcomes = self._outcomes([pair for _, pair in chunk])
            per_forwarder: dict[str, dict[CsId, Entry | None]] = {}
            for (name, (cs_id, ingress)), outcome in zip(chunk, outcomes, strict=True):
                entry = self._attributed(name, cs_id, ingress, service_entry(cs_id, outcome))
                per_forwarder.setdefault(name, {})[cs_id] = entry
            for name, services in per_forwarder.items():
                if self.intended.set_services(name, services):
                    changed.add(name)
        for name in changed:
            self._wake(name)

    def _attributed(
        self, name: str, cs_id: CsId, ingress: ForwarderId, entry: Entry | None
    ) -> Entry | None:
        """The entry to intend: the current one when it installs the same thing; otherwise
        the new one, naming the decision record kept for it (its provenance)."""
        provenance = self._provenance
        if provenance is None:
            return entry
        _, current = self.intended.entry(name, ("service", cs_id))
        if entry is None:
            if current is not None:
                provenance.installed(name, cs_id, None)
            return None
        if current is not None and same_content(current, entry):
            return current
        attributed = with_decision(entry, provenance.steering_record(cs_id, ingress, name))
        provenance.installed(name, cs_id, attributed.members)
        return attributed

    def _snapshot_workers(self) -> list[tuple[ForwarderSpec, ForwarderWorker]]:
        with self._cond:
            return list(self._workers.values())

    def _wake(self, name: str) -> None:
        with self._cond:
            found = self._workers.get(name)
        if found is not None:
            found[1].wake()

    def _follow_inventory(self) -> set[str]:
        """Re-read the inventory when running changed; the names of new or changed forwarders."""
        core = self._core()
        etag = core.revision(DatastoreName.RUNNING, None).etag
        if etag == self._etag:
            return set()
        document = core.read(ReadRequest(DatastoreName.RUNNING, FORWARDERS), SYSTEM).document
        loaded: Any = json.loads(document) if document else {}
        inventory = parse_inventory(loaded if isinstance(loaded, dict) else {}, core.reveal)
        self._etag = etag
        settings = replace(
            self._settings,
            reconcile_interval=inventory.reconcile_interval,
            write=replace(self._settings.write, confirm_timeout=inventory.confirm_timeout),
        )
        same_settings = inventory.reconcile_interval == self._inventory.reconcile_interval and (
            inventory.confirm_timeout == self._inventory.confirm_timeout
        )
        self._inventory = inventory
        wanted = inventory.by_name()
        with self._cond:
            current = dict(self._workers)
        stale = [
            n for n, (spec, _) in current.items() if wanted.get(n) != spec or not same_settings
        ]
        for name in stale:
            with self._cond:
                _, worker = self._workers.pop(name)
            worker.stop()
        added: set[str] = set()
        for name, spec in wanted.items():
            if name in current and name not in stale:
                continue
            self.intended.retain_services(name, spec.cs_ids if spec.ingress else ())
            worker = ForwarderWorker(
                name,
                self._sessions(spec),
                self.intended,
                settings,
                on_pushed=self._pushed,
                leader=self._leader,
            )
            with self._cond:
                self._workers[name] = (spec, worker)
            worker.start()
            added.add(name)
        if added or stale:
            LOG.info("steering %d forwarders (%d new)", len(wanted), len(added))
        return added

    # -- operational state ---------------------------------------------------------------------

    def _pushed(self, pushed: Pushed) -> None:
        """Tell the NETCONF stream of a write (ietf-cats-steering ``forwarder-push``)."""
        if self._publish is not None:
            self._publish(push_notification(pushed))

    def state(self) -> Json:
        """``forwarders`` operational state: each forwarder's session and counters."""
        items = [
            {
                "name": name,
                "state": status_json(
                    worker.status, self.intended.counts(name), self.intended.generation(name)
                ),
            }
            for name, (_, worker) in sorted(self._snapshot_workers_named().items())
        ]
        return {f"{MODULE}:forwarders": {"forwarder": items}} if items else {}

    def _snapshot_workers_named(self) -> dict[str, tuple[ForwarderSpec, ForwarderWorker]]:
        with self._cond:
            return dict(self._workers)

    def southbound_ready(self) -> bool:
        """Whether every configured forwarder's session is up (``/readyz``)."""
        return all(worker.status.connected for _, worker in self._snapshot_workers())

    def status(self, forwarder: str) -> ForwarderStatus | None:
        """The status of one forwarder's worker, if it is configured."""
        with self._cond:
            found = self._workers.get(forwarder)
        return found[1].status if found else None
