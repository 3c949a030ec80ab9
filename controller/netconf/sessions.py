"""NETCONF sessions: ids, the registry kill-session and monitoring read, and their counters."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from controller.datastore.api import DatastoreName


@dataclass
class Counters:
    """RFC 6022 per-session and global counters."""

    in_rpcs: int = 0
    in_bad_rpcs: int = 0
    out_rpc_errors: int = 0
    out_notifications: int = 0


@dataclass
class SessionInfo:
    """One session as ietf-netconf-monitoring lists it (RFC 6022 2.1.4)."""

    session_id: int
    user: str
    source_host: str
    kill: Callable[[int], None] = field(repr=False)  # killed-by session id
    login_time: datetime = field(default_factory=lambda: datetime.now(UTC))
    counters: Counters = field(default_factory=Counters)


@dataclass
class Statistics:
    """RFC 6022 2.1.5 statistics (besides the summed per-session counters)."""

    start_time: datetime = field(default_factory=lambda: datetime.now(UTC))
    in_bad_hellos: int = 0
    in_sessions: int = 0
    dropped_sessions: int = 0
    closed: Counters = field(default_factory=Counters)  # of sessions that ended


class Registry:
    """Every open session, when each took its locks, and the statistics.

    Who holds a lock is the core's to say (``ServerCore.lock_holders``); the registry keeps
    only the RFC 6022 ``locked-time`` the core does not record.
    """

    def __init__(self, ids: Callable[[], int] | None = None) -> None:
        """``ids`` draws session ids (a cluster's, unique across its replicas); by default
        they count from 1."""
        self._ids = ids or itertools.count(1).__next__
        self._lock = threading.Lock()
        self._sessions: dict[int, SessionInfo] = {}
        self.statistics = Statistics()
        self._locked: dict[tuple[DatastoreName, str], datetime] = {}

    def next_id(self) -> int:
        """A new session id (RFC 6241 8.1: never 0)."""
        with self._lock:
            return self._ids()

    def add(self, info: SessionInfo, bound: int) -> bool:
        """A session finished its hello; False (not added) when ``bound`` sessions are open."""
        with self._lock:
            if len(self._sessions) >= bound:
                return False
            self._sessions[info.session_id] = info
            self.statistics.in_sessions += 1
            return True

    def remove(self, session_id: int, *, dropped: bool) -> None:
        """A session ended (``dropped``: without close-session or kill-session)."""
        with self._lock:
            info = self._sessions.pop(session_id, None)
            if info is not None:
                total = self.statistics.closed
                total.in_rpcs += info.counters.in_rpcs
                total.in_bad_rpcs += info.counters.in_bad_rpcs
                total.out_rpc_errors += info.counters.out_rpc_errors
                total.out_notifications += info.counters.out_notifications
            if dropped:
                self.statistics.dropped_sessions += 1
            for datastore, holder in list(self._locked):
                if holder == str(session_id):
                    del self._locked[datastore, holder]

    def locked(self, datastore: DatastoreName, session: str) -> None:
        """A session took a datastore's lock now."""
        with self._lock:
            self._locked[datastore, session] = datetime.now(UTC)

    def unlocked(self, datastore: DatastoreName, session: str) -> None:
        """A session released a datastore's lock."""
        with self._lock:
            self._locked.pop((datastore, session), None)

    def locked_time(self, datastore: DatastoreName, session: str) -> datetime:
        """When the session took the lock (first seen now, if not taken through NETCONF)."""
        with self._lock:
            return self._locked.setdefault((datastore, session), datetime.now(UTC))

    def get(self, session_id: int) -> SessionInfo | None:
        """A session by id."""
        with self._lock:
            return self._sessions.get(session_id)

    def sessions(self) -> list[SessionInfo]:
        """The open sessions, by id."""
        with self._lock:
            return [self._sessions[key] for key in sorted(self._sessions)]

    def bad_hello(self) -> None:
        """Count a hello that was refused."""
        with self._lock:
            self.statistics.in_bad_hellos += 1

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
