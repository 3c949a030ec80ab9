"""Datastore locks shared by every northbound (RFC 6241 7.5, 7.6; RFC 8040 1.4)."""

from __future__ import annotations

import threading

from controller.datastore.api import DatastoreName
from controller.datastore.errors import DatastoreError, refuse
from controller.errors import ErrorType

LOCKABLE = (DatastoreName.RUNNING, DatastoreName.CANDIDATE, DatastoreName.STARTUP)


class Locks:
    """Which session holds the lock of each datastore."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._holders: dict[DatastoreName, str] = {}

    def holder(self, datastore: DatastoreName) -> str | None:
        """The session holding a datastore's lock, if any."""
        with self._guard:
            return self._holders.get(datastore)

    def holders(self) -> dict[DatastoreName, str]:
        """Every locked datastore and the session holding it."""
        with self._guard:
            return dict(self._holders)

    def lock(self, datastore: DatastoreName, session: str) -> None:
        """Take a lock; ``lock-denied`` with the holder's session-id when it is taken."""
        if datastore not in LOCKABLE:
            raise refuse("operation-not-supported", f"{datastore} cannot be locked")
        with self._guard:
            holder = self._holders.get(datastore)
            if holder is not None:
                raise _denied(datastore, holder)
            self._holders[datastore] = session

    def unlock(self, datastore: DatastoreName, session: str) -> None:
        """Release a lock the session holds (RFC 6241 7.6: else ``operation-failed``)."""
        with self._guard:
            if self._holders.get(datastore) != session:
                message = f"session {session} does not hold the {datastore} lock"
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
            return held


def _denied(datastore: DatastoreName, holder: str) -> DatastoreError:
    return refuse(
        "lock-denied",
        f"the {datastore} datastore is locked by session {holder}",
        info=(("session-id", holder),),
        error_type=ErrorType.PROTOCOL,
    )
