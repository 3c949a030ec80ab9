"""What the parts of the server core share: its settings, its state and its locks.

The core (:class:`~controller.datastore.core.Core`) is composed of parts, one module each:
reads (:mod:`.reading`), transactions (:mod:`.editing`), RPCs (:mod:`.invoking`) and
notifications (:mod:`.publishing`); the whole-datastore operations and the candidate are
objects of their own (:mod:`.operations`, :mod:`.candidate`). Each part is a
:class:`CoreParts`, which declares the state ``Core.__init__`` sets and the lookups every part
uses.

Two locks guard the trees. The read lock (``_lock``, re-entrant) serialises every use of the
libyang trees: a read never sees a half-applied edit. The write lock (``_write``) is taken
first by every change of running and of the candidate, so those go one at a time, and a large
one works on a copy under the write lock alone, taking the read lock only to copy and to swap
(:mod:`.shadow`). Lock order is write, then read, then the bus's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.audit import HistoryStore
from controller.datastore import rpc
from controller.datastore.access import Guard
from controller.datastore.api import DatastoreName, Principal, Registrations, StateProvider
from controller.datastore.authorization import Authorization
from controller.datastore.bus import DEFAULT_PER_USER, DEFAULT_REPLAY, NotificationBus
from controller.datastore.candidate import Candidate
from controller.datastore.contexts import Contexts
from controller.datastore.errors import refuse
from controller.datastore.files import REAL_DISK, Disk
from controller.datastore.history import HistoryRecorder
from controller.datastore.limits import MAX_EDIT_NODES
from controller.datastore.locks import Locks, SharedLock
from controller.datastore.preparse import Preparse
from controller.datastore.replication import Replication, SharedStartup
from controller.datastore.secrets import Secrets
from controller.datastore.shadow import SHADOW_NODES
from controller.datastore.stores import COMPACT_MINIMUM, ConfigStore
from controller.datastore.validation import Validator
from controller.model import nodes
from controller.model.schema import Schema
from controller.types import DataPath


@dataclass(frozen=True, slots=True)
class CoreSettings:
    """Tunables of the core."""

    replay_size: int = DEFAULT_REPLAY
    compact_minimum: int = COMPACT_MINIMUM
    incremental: bool = True  # entry-local validation with indexes (else always full)
    streams: tuple[str, ...] = ()
    parse_contexts: int | None = None  # twin contexts for parallel RPC parsing; None: one per CPU
    hash_password: Callable[[str], str] | None = None  # for $0$ passwords; None: SHA-512 crypt
    history: HistoryStore | None = None  # where every commit of running is kept (None: nowhere)
    disk: Disk = REAL_DISK  # where persisted bytes are written (a test's full disk)
    subscriptions_per_user: int = DEFAULT_PER_USER  # event streams, NETCONF subscriptions
    max_edit_nodes: int = MAX_EDIT_NODES  # data nodes of one edit; more: too-big
    shadow_nodes: int = SHADOW_NODES  # from this size an edit works on a copy
    compact_at_close: bool = True  # False: close leaves the journal as a crash would (tests)
    replication: Replication | None = None  # a cluster's log instead of running's journal
    shared_lock: SharedLock | None = None  # the cluster's lock of running (None: this one's)
    startup_lock: SharedLock | None = None  # the cluster's lock of startup (None: this one's)
    node: str | None = None  # this replica's name in a cluster (--node-id), for the audit
    startup: SharedStartup | None = None  # the cluster's startup (None: this server's file)
    preparse: Preparse | None = None  # running's snapshot, parsed while the server imported


class CoreParts:
    """The state of the core its parts share (set by ``Core.__init__``)."""

    schema: Schema
    ctx: Any
    settings: CoreSettings
    registrations: Registrations
    authorization: Authorization
    secrets: Secrets
    bus: NotificationBus
    running: ConfigStore
    _startup: ConfigStore
    _startup_copied: bool  # False: startup is running as loaded, not copied yet
    _startup_lyb: bytes | Path | None  # running as loaded, once running changed
    candidate: Candidate
    validator: Validator
    history: HistoryRecorder | None
    _lock: threading.RLock
    _write: threading.RLock
    _locks: Locks
    _contexts: Contexts
    _state: dict[DataPath, StateProvider]
    _operations: dict[DataPath, rpc.Operation]  # RPCs, resolved once
    _notifications: dict[int, bool]  # notification schema node: reads running
    _free_notifications: dict[str, bool]  # top-level by name: reads no running

    @property
    def startup(self) -> ConfigStore:
        """The startup datastore; without one of its own, running as loaded: a copy of
        running's tree while running is unchanged, else parsed from the snapshot it was
        loaded from (linked when running first changed), or from the LYB document
        :meth:`running_changes` printed of it (a tenth of a tree's memory until read)."""
        if not self._startup_copied:
            with self._lock:
                if not self._startup_copied:
                    lyb, self._startup_lyb = self._startup_lyb, None
                    if isinstance(lyb, Path):
                        self._startup.replace_tree(self.running.parse_kept(lyb))
                    elif lyb is not None:
                        self._startup.replace_tree(nodes.parse_lyb(self.ctx, lyb))
                    else:
                        self._startup.replace_tree(self.running.copy_tree())
                    self._startup_copied = True
        return self._startup

    def running_changes(self) -> None:
        """Called before a transaction changes running's tree in place (the caller holds the
        write lock): what start-up left to derive from running as loaded is derived now."""
        self._keep_startup_as_loaded()

    def _keep_startup_as_loaded(self) -> None:
        """Before running first changes: print it for a startup that is running as loaded."""
        with self._lock:
            if not self._startup_copied and self._startup_lyb is None:
                if not self.running.first[0]:
                    self._startup_copied = True  # empty, as startup is
                else:  # the file it was loaded from, else 10 MB at 100k entries in memory
                    kept = self.running.keep_as_loaded()
                    self._startup_lyb = kept or nodes.print_lyb(self.running.first[0])

    @property
    def replication(self) -> Replication | None:
        """The cluster's log of commits (None: running has its own journal)."""
        return self.settings.replication

    @property
    def node(self) -> str | None:
        """This replica's name in a cluster (None: no cluster): the audit records of the
        commits it makes name it."""
        return self.settings.node

    @property
    def read_lock(self) -> threading.RLock:
        """The lock every use of the trees takes (a large edit takes it only to copy and swap)."""
        return self._lock

    @property
    def write_lock(self) -> threading.RLock:
        """The lock every change of running or candidate takes first, before :attr:`read_lock`."""
        return self._write

    @property
    def per_node(self) -> bool:
        """Whether NACM is enforced now (``enable-nacm``): per-node checks cost nothing when
        it is not."""
        return self.authorization.nacm.policy.enable_nacm

    def guard(self, principal: Principal) -> Guard:
        """The access guard of a transaction run by ``principal`` (RFC 8341 3.4.5)."""
        return self.authorization.guard(principal)

    def store(self, datastore: DatastoreName) -> ConfigStore:
        """The configuration store of a datastore (candidate: its tree or running's)."""
        if datastore is DatastoreName.STARTUP:
            return self.startup
        if datastore is DatastoreName.CANDIDATE and self.candidate.store is not None:
            return self.candidate.store
        if datastore is DatastoreName.OPERATIONAL:
            raise refuse("operation-not-supported", "operational is not a configuration datastore")
        return self.running


__all__ = ["MAX_EDIT_NODES", "CoreParts", "CoreSettings"]
