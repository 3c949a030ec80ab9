"""The whole-datastore operations of the core: candidate, validate, copy, restore, locks.

NETCONF (RFC 6241 7.3-7.6, 8.3, 8.4, 8.6) asks for these; RESTCONF uses the locks' checks only.
:class:`DatastoreOperations` is a part of :class:`~controller.datastore.core.Core`, which
delegates to it and hands itself in as the :class:`~controller.datastore.seams.OperationsHost`;
every operation that changes running or the candidate takes the core's write lock first, and
its read lock only where it uses the trees, so that a large commit or copy is worked on a copy
while reads go on (:mod:`.shadow`).
"""

from __future__ import annotations

import threading

from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Edit,
    EditOperation,
    Principal,
    Revision,
)
from controller.datastore.candidate import Candidate
from controller.datastore.datapath import ROOT
from controller.datastore.errors import refuse
from controller.datastore.locks import Locks
from controller.datastore.seams import OperationsHost
from controller.datastore.stores import ConfigStore
from controller.datastore.transaction import Txn
from controller.errors import ErrorType
from controller.model.schema import Encoding


class DatastoreOperations:
    """Operations on whole datastores, over the core's stores, candidate, lock and locks."""

    def __init__(
        self,
        core: OperationsHost,
        candidate: Candidate,
        lock: tuple[threading.RLock, threading.RLock],
        locks: Locks,
    ) -> None:
        self._core = core
        self._candidate = candidate
        self._write, self._lock = lock  # a change of running takes the write lock first
        self._locks = locks

    # ------------------------------------------------------------------ candidate

    def commit(self, principal: Principal, *, session: str | None = None) -> Revision:
        """Make candidate the running configuration (RFC 6241 8.3.4.1)."""
        self._locks.check(DatastoreName.CANDIDATE, session)
        with self._write:  # a large commit takes the read lock only to copy and swap
            return self._candidate.commit(principal, session)

    def discard_changes(self, *, session: str | None = None) -> None:
        """Revert candidate to running (RFC 6241 8.3.4.2)."""
        self._locks.check(DatastoreName.CANDIDATE, session)
        with self._write, self._lock:
            self._candidate.discard()

    # ------------------------------------------------------------------ whole datastores

    def validate(self, datastore: DatastoreName) -> None:
        """Validate a whole datastore (RFC 6241 8.6), changing nothing."""
        with self._lock:
            store = self._core.store(datastore)
            copy = ConfigStore(store.ctx, datastore, None)
            copy.replace_tree(store.copy_tree())
        try:
            copy.validate()  # the copy is this call's own: reads go on meanwhile
        finally:
            copy.close()

    def copy_config(
        self,
        source: DatastoreName,
        target: DatastoreName,
        principal: Principal,
        *,
        session: str | None = None,
    ) -> Revision:
        """Replace a datastore with another's content (RFC 6241 7.3).

        The source is printed under the read lock; the replacement is an edit of the target
        under the write lock alone, so a large one is worked on a copy while reads go on. In
        a cluster a copy from startup copies the cluster's startup (docs/cluster.md).
        """
        if source is DatastoreName.STARTUP:
            self._core.consistent(source)
        with self._write:
            with self._lock:
                document = self._core.store(source).print()
            whole = Edit(EditOperation.REPLACE, ROOT, document, Encoding.JSON)
            return self._core.copy_in(target, [whole], principal, session=session)

    def restore(self, datastore: DatastoreName, document: str, encoding: Encoding) -> Revision:
        """Replace a configuration datastore with ``document`` as the server's own action.

        For the rollback of a confirmed commit (RFC 6241 8.4: the server restores running when
        the confirming commit does not come): it runs as :data:`SYSTEM`, is not refused by any
        session's lock, and is all or nothing, validated, persisted and notified as a
        ``netconf-config-change`` like any edit. ``document`` is a whole datastore (RFC 7951
        JSON, or XML with one or several top-level elements).
        """
        if datastore is DatastoreName.OPERATIONAL:
            raise refuse("operation-not-supported", "operational is not a configuration datastore")
        whole = Edit(EditOperation.REPLACE, ROOT, document, encoding)
        if datastore is DatastoreName.RUNNING:  # a large one is worked on a copy meanwhile
            return self._core.put_back(Txn(datastore, SYSTEM, None, [whole], past_locks=True))
        with self._write, self._lock:
            if datastore is DatastoreName.CANDIDATE:
                return self._candidate.edit([whole], SYSTEM, None, test_only=False)
            return self._core.transaction(Txn(datastore, SYSTEM, None, [whole]))

    # ------------------------------------------------------------------ locks

    def lock(self, datastore: DatastoreName, session: str) -> None:
        """Take a datastore's lock (RFC 6241 7.5: not candidate with uncommitted changes).

        After the change in flight, if any (the write lock): a large commit of another session
        works on a copy without the read lock, and must not land after the lock is granted.
        """
        with self._write:  # not the read lock: in a cluster, running's lock is an etcd request
            with self._lock:
                if datastore is DatastoreName.CANDIDATE and self._candidate.modified:
                    raise refuse(
                        "lock-denied",
                        "the candidate has uncommitted changes",
                        info=(("session-id", "0"),),
                        error_type=ErrorType.PROTOCOL,
                    )
            self._locks.lock(datastore, session)

    def unlock(self, datastore: DatastoreName, session: str) -> None:
        """Release a lock the session holds."""
        self._locks.unlock(datastore, session)

    def lock_holders(self) -> dict[DatastoreName, str]:
        """The session id holding each locked datastore (ietf-netconf-monitoring, RFC 6022)."""
        return self._locks.holders()

    def release_session(self, session: str) -> None:
        """Free a closed session's locks; its candidate changes go with the candidate lock."""
        with self._write:  # not the read lock: in a cluster, running's lock is an etcd request
            if DatastoreName.CANDIDATE in self._locks.release(session):
                with self._lock:
                    self._candidate.discard()
