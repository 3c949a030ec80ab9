"""Datastore locks shared by every northbound (RFC 6241 7.5, 7.6; RFC 8040 1.4).

Without a cluster each lock is this process's. In a cluster (docs/cluster.md, "NETCONF locks")
the locks of running and startup are the cluster's: a :class:`SharedLock` (an etcd key bound
to a lease of the replica that took it, :mod:`controller.cluster.locks`) says who holds each,
and every commit of running and write of startup is guarded on it in its own etcd
transaction, so that a session that does not hold it cannot write on any replica. candidate
stays each replica's own, as each replica has its own candidate.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Protocol

from controller.datastore.api import DatastoreName
from controller.datastore.errors import DatastoreError, refuse
from controller.errors import ErrorType

LOCKABLE = (DatastoreName.RUNNING, DatastoreName.CANDIDATE, DatastoreName.STARTUP)


class SharedLock(Protocol):
    """The lock of a datastore as the whole cluster sees it (implemented by
    :class:`controller.cluster.locks.EtcdLocks`); a session is its id as a string."""

    def acquire(self, session: str) -> str | None:
        """Take the lock for ``session``: None when taken, else the session id of its holder
        (on any replica).

        Raises:
            DatastoreError: the cluster cannot take it now (``resource-denied``).
        """
        ...

    def release(self, session: str) -> bool:
        """Release the lock if ``session`` (of this replica) holds it; whether it did."""
        ...

    def mine(self) -> str | None:
        """The session of this replica that holds the lock, or None (no round trip)."""
        ...

    def holder(self) -> str | None:
        """The session holding the lock anywhere in the cluster, or None (one etcd read;
        None too when the cluster cannot be read)."""
        ...


class Locks:
    """Which session holds the lock of each datastore (those of ``shared``: the cluster's)."""

    def __init__(self, shared: Mapping[DatastoreName, SharedLock] | None = None) -> None:
        self._guard = threading.Lock()
        self._holders: dict[DatastoreName, str] = {}
        self._shared = dict(shared or {})

    def holder(self, datastore: DatastoreName) -> str | None:
        """The session holding a datastore's lock, if any (a cluster's lock: one of this
        replica; another replica's holder is refused by the write itself)."""
        shared = self._shared.get(datastore)
        if shared is not None:
            return shared.mine()
        with self._guard:
            return self._holders.get(datastore)

    def holders(self) -> dict[DatastoreName, str]:
        """Every locked datastore and the session holding it (a cluster's lock: on any
        replica, one etcd read)."""
        with self._guard:
            held = dict(self._holders)
        for datastore, shared in self._shared.items():
            holder = shared.mine() or shared.holder()
            if holder is not None:
                held[datastore] = holder
        return held

    def lock(self, datastore: DatastoreName, session: str) -> None:
        """Take a lock; ``lock-denied`` with the holder's session-id when it is taken."""
        if datastore not in LOCKABLE:
            raise refuse("operation-not-supported", f"{datastore} cannot be locked")
        shared = self._shared.get(datastore)
        if shared is not None:
            holder = shared.acquire(session)
            if holder is not None:
                raise _denied(datastore, holder)
            return
        with self._guard:
            holder = self._holders.get(datastore)
            if holder is not None:
                raise _denied(datastore, holder)
            self._holders[datastore] = session

    def unlock(self, datastore: DatastoreName, session: str) -> None:
        """Release a lock the session holds (RFC 6241 7.6: else ``operation-failed``)."""
        message = f"session {session} does not hold the {datastore} lock"
        shared = self._shared.get(datastore)
        if shared is not None:
            if not shared.release(session):
                raise refuse("operation-failed", message)
            return
        with self._guard:
            if self._holders.get(datastore) != session:
                raise refuse("operation-failed", message)
            del self._holders[datastore]

    def check(self, datastore: DatastoreName, session: str | None) -> None:
        """Refuse a write from anyone but the holder (no session: RESTCONF, refused too)."""
        holder = self.holder(datastore)
        if holder is not None and holder != session:
            raise _denied(datastore, holder)

    def release(self, session: str) -> list[DatastoreName]:
        """Free every lock of a session; the datastores it held."""
        with self._guard:
            held = [name for name, holder in self._holders.items() if holder == session]
            for name in held:
                del self._holders[name]
        held += [name for name, shared in self._shared.items() if shared.release(session)]
        return held


def denied(datastore: DatastoreName, holder: str) -> DatastoreError:
    """``lock-denied`` naming the session that holds ``datastore``'s lock (RFC 6241 7.5)."""
    return _denied(datastore, holder)


def _denied(datastore: DatastoreName, holder: str) -> DatastoreError:
    return refuse(
        "lock-denied",
        f"the {datastore} datastore is locked by session {holder}",
        info=(("session-id", holder),),
        error_type=ErrorType.PROTOCOL,
    )
