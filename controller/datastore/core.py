"""The server core (api.ServerCore): NMDA datastores, transactions, locks, RPCs, notifications.

:class:`Core` composes its parts (:mod:`.parts` says which and how the read and write locks
guard the trees): reads, transactions, RPCs and notifications are its own methods, inherited
from one module each; the candidate and the whole-datastore operations are objects it owns and
delegates to. State providers run before the read lock is taken; commit hooks run under it
(they may read the core).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from controller.datastore import snapshot
from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Principal,
    Registrations,
    Revision,
    StateProvider,
)
from controller.datastore.authorization import AccountsWatcher, Authorization
from controller.datastore.bus import NotificationBus
from controller.datastore.candidate import Candidate
from controller.datastore.contexts import Contexts, default_size
from controller.datastore.editing import Editing
from controller.datastore.history import HistoryRecorder
from controller.datastore.invoking import Invoking
from controller.datastore.kept import KeptDocuments
from controller.datastore.locks import Locks
from controller.datastore.nacm import NACM_PATH
from controller.datastore.operations import DatastoreOperations
from controller.datastore.parts import MAX_EDIT_NODES, CoreSettings
from controller.datastore.publishing import Publishing
from controller.datastore.reading import MODULES_STATE, YANG_LIBRARY, Reading
from controller.datastore.secrets import BUILT_IN, SecretKind, Secrets, load_key
from controller.datastore.stores import ConfigStore
from controller.datastore.validation import FullValidation, ValidationStats, Validator
from controller.model import native
from controller.model.library import module_records, modules_state, yang_library
from controller.model.schema import Encoding, Schema
from controller.types import DataPath

LOG = logging.getLogger(__name__)
DATASTORES = tuple(name.identity for name in DatastoreName)


class Core(Reading, Editing, Invoking, Publishing):
    """The model-driven server core both northbounds share."""

    def __init__(
        self,
        schema: Schema,
        state_dir: Path | None,
        registrations: Registrations | None = None,
        settings: CoreSettings | None = None,
    ) -> None:
        self.schema = schema
        self.ctx = schema.context.cdata
        self.settings = settings or CoreSettings()
        self.registrations = registrations or Registrations()
        secret_leaves = sorted(self.registrations.secrets)
        denied = [*secret_leaves, *sorted(self.registrations.protected)]
        self.authorization = Authorization(self.ctx, denied)
        leaves = {**BUILT_IN, **dict.fromkeys(secret_leaves, SecretKind.ENCRYPT)}
        self.secrets = Secrets(load_key(state_dir), leaves, self.settings.hash_password)
        self._lock = threading.RLock()
        self._write = threading.RLock()  # changes of running and candidate; before _lock
        cluster_locks = {
            DatastoreName.RUNNING: self.settings.shared_lock,
            DatastoreName.STARTUP: self.settings.startup_lock,
        }
        self._locks = Locks({name: lock for name, lock in cluster_locks.items() if lock})
        self._operations = {}
        self._notifications = {}
        self._free_notifications = {}
        self.bus = NotificationBus(
            self._matches,
            self.settings.replay_size,
            self.settings.streams,
            self.settings.subscriptions_per_user,
        )
        records = module_records(schema)
        library = yang_library(records, DATASTORES)
        legacy = modules_state(records)
        self._state: dict[DataPath, StateProvider] = {
            YANG_LIBRARY: lambda: library,
            MODULES_STATE: lambda: legacy,
        }
        self._state[DataPath(NACM_PATH)] = self.authorization.state
        self._state.update(self.registrations.state)
        folder, disk = state_dir, self.settings.disk
        schema_id = snapshot.fingerprint(records, native.library_file())
        replicated = self.settings.replication
        self.running = ConfigStore(
            self.ctx, DatastoreName.RUNNING, None if replicated else folder, disk, schema_id
        )
        self.running.replication = replicated
        shared = self.settings.startup  # a cluster's: no file of this replica's (cluster.md)
        self._startup = ConfigStore(
            self.ctx, DatastoreName.STARTUP, None if shared else folder, disk, schema_id
        )
        self._startup_copied = True  # False: startup is running as loaded, not copied yet
        self._startup_lyb = None  # running as loaded (its snapshot, linked), once it changed
        self._kept = KeptDocuments(folder, disk)
        self.candidate = Candidate(self)
        self._datastores = DatastoreOperations(
            self, self.candidate, (self._write, self._lock), self._locks
        )
        self.validator: Validator = self._validator()
        size = self.settings.parse_contexts
        self._contexts = Contexts(schema, default_size() if size is None else size)
        store = self.settings.history
        self.history = HistoryRecorder(store) if store is not None else None
        with self._lock:
            self._load()
        self.authorization.watch_accounts(self._end_streams_of_deleted)

    def _load(self) -> None:
        """Load running and startup from the state directory (under the core's lock)."""
        preparse = self.settings.preparse
        self.running.forget_as_loaded()  # left by a crash
        try:
            self.running.load(preparse=preparse)
        finally:
            if preparse is not None:
                preparse.close()  # a tree it did not take (another snapshot)
        # no startup of its own: a copy of running as loaded, taken when first needed; a
        # cluster's is what the cluster holds (empty until written), read by follow()
        self._startup_copied = self._startup.load() or self.settings.startup is not None
        self.validator.rebuild(self.running)
        self.authorization.reload(self.running.first[0])

    def _validator(self) -> Validator:
        if self.settings.incremental:
            from controller.datastore.local import LocalValidation  # noqa: PLC0415

            return LocalValidation(self.ctx)
        return FullValidation()

    def end_subscriptions(self) -> None:
        """End every event-stream subscription, so that no client holds a worker at shutdown."""
        self.bus.close_all()

    def close(self) -> None:
        """End the subscriptions, free the trees and close the files (the schema belongs to
        the caller)."""
        self.end_subscriptions()
        with self._write, self._lock:
            if self.settings.compact_at_close:  # the next start loads one snapshot
                self.running.compact_at_close()
                self._startup.compact_at_close()
            self.candidate.close()
            self.running.forget_as_loaded()
            self.running.close()
            self._startup.close()
            self._contexts.close()
        self.secrets.close()

    def __enter__(self) -> Core:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ access

    def authorize(self, principal: Principal, module: str, name: str) -> None:
        """RFC 8341 3.4.4 for a protocol operation a northbound serves itself: ``access-denied``
        unless ``principal`` may invoke ``module:name``."""
        self.authorization.named_operation(principal, module, name)

    def watch_accounts(self, watcher: AccountsWatcher) -> None:
        """Call ``watcher`` with the remaining user names after every change of the users or
        of NACM (a northbound ends the sessions of users who are gone)."""
        self.authorization.watch_accounts(watcher)

    def _end_streams_of_deleted(self, users: frozenset[str]) -> None:
        ended = self.bus.close_owned(lambda owner: owner in users or owner == SYSTEM.user)
        if ended:
            LOG.info("nacm: ended %d event stream(s) of deleted users", ended)

    def reveal(self, secret: str) -> str:
        """The clear text of a stored secret (southbound credentials), for the server's own
        use; never for a reply."""
        return self.secrets.reveal(secret)

    def keep(self, name: str, document: str | None) -> None:
        """Durably keep (None: forget) a small document of the server's own; see
        :class:`~controller.datastore.kept.KeptDocuments`."""
        self._kept.keep(name, document)

    def kept(self, name: str) -> str | None:
        """A document :meth:`keep` kept, also before a restart; None when there is none."""
        return self._kept.kept(name)

    def validation_stats(self) -> ValidationStats:
        """How many running transactions were validated locally and in full."""
        return self.validator.stats()

    # ------------------------------------------------------------------ whole datastores

    def commit(self, principal: Principal, *, session: str | None = None) -> Revision:
        """Make candidate the running configuration (RFC 6241 8.3.4.1)."""
        return self._datastores.commit(principal, session=session)

    def discard_changes(self, *, session: str | None = None) -> None:
        """Revert candidate to running (RFC 6241 8.3.4.2)."""
        self._datastores.discard_changes(session=session)

    def validate(self, datastore: DatastoreName) -> None:
        """Validate a whole datastore (RFC 6241 8.6), changing nothing."""
        self._datastores.validate(datastore)

    def copy_config(
        self,
        source: DatastoreName,
        target: DatastoreName,
        principal: Principal,
        *,
        session: str | None = None,
    ) -> Revision:
        """Replace a datastore with another's content (RFC 6241 7.3)."""
        return self._datastores.copy_config(source, target, principal, session=session)

    def restore(self, datastore: DatastoreName, document: str, encoding: Encoding) -> Revision:
        """Replace a configuration datastore with a whole document as the server's own action
        (RFC 6241 8.4 confirmed-commit rollback); see :meth:`DatastoreOperations.restore`."""
        return self._datastores.restore(datastore, document, encoding)

    def lock(self, datastore: DatastoreName, session: str) -> None:
        """Take a datastore's lock (RFC 6241 7.5: not candidate with uncommitted changes)."""
        self._datastores.lock(datastore, session)

    def unlock(self, datastore: DatastoreName, session: str) -> None:
        """Release a lock the session holds (RFC 6241 7.6)."""
        self._datastores.unlock(datastore, session)

    def lock_holders(self) -> dict[DatastoreName, str]:
        """The session id holding each locked datastore (ietf-netconf-monitoring, RFC 6022)."""
        return self._datastores.lock_holders()

    def release_session(self, session: str) -> None:
        """Free a closed session's locks; its candidate changes go with the candidate lock."""
        self._datastores.release_session(session)


__all__ = ["MAX_EDIT_NODES", "SYSTEM", "Core", "CoreSettings"]
