"""The forwarder as an application of the model-driven server (controller.server ``Installer``).

:func:`installer` registers a commit hook on running, which turns each committed
ietf-cats-steering change into the forwarding state (:class:`Forwarding`), and the state
provider of ``steering`` (counters and summary). The C-PS edits the configuration with
NETCONF edit-config through the candidate and a confirmed commit (MSG-10, agent draft 9.1);
the forwarder never changes it, except to seed its own identity when running has none.
A sweeper thread expires entries, releases idle flows and reports tail events; the
notifications go on the NETCONF stream.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from agents.common.logins import rule, seed_logins
from agents.forwarder import model
from agents.forwarder.config import ForwarderConfig
from agents.forwarder.fencing import Fence
from agents.forwarder.forwarding import Forwarding, ledger_part
from agents.forwarder.ledger import Ledger
from agents.forwarder.table import Reach
from agents.forwarder.values import EntryKey, Kind, Rule, ServiceEntry, Steering
from controller.datastore.api import (
    SYSTEM,
    Change,
    DatastoreName,
    Edit,
    EditOperation,
    ReadRequest,
    Registrations,
)
from controller.model import Encoding
from controller.server import Host, Hosted, Installer
from controller.types import CommitmentId, CsId, DataPath, ForwarderId, Json

LOG = logging.getLogger("agents.forwarder")

#: The forwarder's access control (RFC 8341): its users (the C-PS that steers it, and its
#: operators) write its steering configuration; reads and operations follow the defaults, and
#: nobody changes users or access control over the northbound (they come from the file).
RULE_LISTS = (
    {
        "name": "controller",
        "group": ["controller"],
        "rule": [
            rule(
                "no-users",
                "deny",
                module_name="ietf-system",
                access_operations="create update delete",
            ),
            rule("no-nacm", "deny", module_name="ietf-netconf-acm"),
            rule(
                "steering",
                "permit",
                module_name="ietf-cats-steering",
                access_operations="create update delete",
            ),
            rule(
                "fencing",
                "permit",
                module_name="cats-fencing",
                access_operations="create update delete",
            ),
        ],
    },
)
SWEEP_S = 0.05


def touched(paths: tuple[str, ...]) -> tuple[bool, set[EntryKey]]:
    """Whether a change needs the whole configuration re-read, and the entries it named."""
    whole, keys = False, set()
    for path in paths:
        if path in ("/", "", model.ROOT):
            whole = True
            continue
        if not path.startswith(model.ROOT + "/"):
            continue
        key = model.entry_of(path)
        if key is None:
            whole = True
        else:
            keys.add(key)
    return whole, keys


class ForwarderService:
    """The running forwarder application: commit hook, state, sweeper."""

    def __init__(
        self, config: ForwarderConfig, host: Host, clock: Callable[[], float] = time.time
    ) -> None:
        self.config, self._host, self._clock = config, host, clock
        self._state_dir = Path(host.settings.state_dir)
        self._own = ForwarderId(config.forwarder_id) if config.forwarder_id else None
        reach = Reach(self._own, frozenset(config.tunnels))
        self._ledger = Ledger(self._state_dir)
        self.forwarding = Forwarding(
            reach,
            config.tunnels,
            config.default_routes,
            clock(),
            self._ledger.saved,
        )
        self._pending_lock = threading.Lock()
        self._pending: list[Json] = []  # notifications of commits, published by the sweeper
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.fence = Fence(host.core)  # a C-PS cluster's leader terms (docs/cluster.md)

    # -- lifecycle (controller.server Hosted) -------------------------------------------------

    def start(self) -> None:
        """Seed users and identity, load running's steering, start the sweeper."""
        core = self._host.core()
        seed_logins(core, self.config.users, RULE_LISTS)
        self.fence.load()
        self._seed_identity()
        self._install(self._read(model.ROOT), whole=True, keys=set())
        self._thread = threading.Thread(target=self._sweep, name="forwarder-sweeper", daemon=True)
        self._thread.start()
        table = self.forwarding.table
        LOG.info(
            "forwarder %s: %d service entries, %d rules from running",
            self.config.forwarder_id,
            len(table.steering.services),
            len(table.steering.rules),
        )

    def close(self) -> None:
        """Stop the sweeper."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _seed_identity(self) -> None:
        """forwarder-id and role from the process configuration, when running has none."""
        current = self._read(model.ROOT)
        body: Json = (current or {}).get(f"{model.MODULE}:steering", {})
        seed: Json = {}
        if "forwarder-id" not in body and self.config.forwarder_id is not None:
            seed["forwarder-id"] = self.config.forwarder_id
        if "role" not in body:
            seed["role"] = sorted(r.value for r in self.config.roles)
        if seed:
            document = json.dumps({f"{model.MODULE}:steering": seed})
            edit = Edit(EditOperation.MERGE, model.ROOT, document, Encoding.JSON)
            self._host.core().edit(DatastoreName.RUNNING, [edit], SYSTEM)

    # -- configuration ---------------------------------------------------------------------

    def _read(self, path: DataPath) -> Json | None:
        result = self._host.core().read(ReadRequest(DatastoreName.RUNNING, path), SYSTEM)
        if result.document is None:
            return None
        found: Json = json.loads(result.document)
        return found

    def on_commit(self, change: Change) -> None:
        """Commit hook: apply a change of running's steering to the forwarding state."""
        whole, keys = touched(change.changed_paths)
        if whole or keys:
            self._install(self._read(model.ROOT) if whole else None, whole=whole, keys=keys)

    def _install(self, document: Json | None, *, whole: bool, keys: set[EntryKey]) -> None:
        if whole:
            steering = model.steering(document)
        else:
            steering = self._patched(self.forwarding.table.steering, keys)
        installed, notes = self.forwarding.install(steering, self._clock(), keys, whole=whole)
        if whole:  # also forgets the times of entries that left while the forwarder was down
            self._ledger.replace(ledger_part(self.forwarding.table))
        elif installed.ledger:
            self._ledger.update(installed.ledger)
        for key in installed.repeated:
            LOG.info("repeated instruction for commitment %s: nothing changed", key.name)
        self._outbox(notes)

    def _patched(self, steering: Steering, keys: set[EntryKey]) -> Steering:
        services, rules = dict(steering.services), dict(steering.rules)
        for key in keys:
            entry = model.read_entry(self._read(model.entry_path(key)), key)
            if isinstance(entry, Rule):
                rules[entry.commitment_id] = entry
            elif isinstance(entry, ServiceEntry):
                services[entry.cs_id] = entry
            elif key.kind is Kind.RULE:
                rules.pop(CommitmentId(key.name), None)
            else:
                services.pop(CsId(key.name), None)
        return replace(steering, services=services, rules=rules)

    # -- notifications and time ------------------------------------------------------------

    def _outbox(self, notes: list[Json]) -> None:
        """Queue notifications: the sweeper publishes them, outside any commit."""
        with self._pending_lock:
            self._pending.extend(notes)

    def _sweep(self) -> None:
        while not self._stop.wait(SWEEP_S):
            forwarder = self.forwarding.table.steering.forwarder_id or self._own
            notes = self.forwarding.sweep(self._clock(), time.monotonic(), forwarder)
            with self._pending_lock:
                notes, self._pending = self._pending + notes, []
            for document in notes:
                self._host.publish(document)

    def state(self) -> Json:
        """``steering`` operational state."""
        return self.forwarding.state()


def installer(config: ForwarderConfig) -> Installer:
    """The forwarder's installer for :class:`controller.server.Application`."""

    def install(registrations: Registrations, host: Host) -> Hosted:
        service = ForwarderService(config, host)
        registrations.commit_hooks.append(service.fence.on_commit)  # before the steering
        registrations.commit_hooks.append(service.on_commit)
        registrations.state[model.ROOT] = service.state
        return service

    return install
