"""Throttling of password checks after repeated failures, per source address and per user.

Pure bookkeeping (the clock is an argument). Each source address and each user name has a
record of recent failures. The first ``free_failures`` cost nothing; after them the next check
waits ``delay`` seconds after the last failure, doubled with each further one up to ``max_delay``
(an exponential back-off, as Keycloak's brute-force detection and OpenSSH's per-source
penalties do). An attempt that comes earlier is refused without a check, so a guesser gets
few checks however many connections it opens. A check in progress counts as a failure until
it is known, so that a burst of parallel guesses at one user cannot all slip under the free
allowance.

A success clears its user's record and makes the (user, source) pair trusted, so guessers
elsewhere cannot lock a user out of the address it works from; the source's own record is
never cleared by a success (a guesser with an account of its own would clear it between
guesses), it is forgotten ``forget_after`` seconds after its last failure. Both tables are
bounded (least recently failed dropped first).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ThrottleSettings:
    """The limits (``catsctl serve --login-*`` options)."""

    free_failures: int = 5
    delay: float = 1.0
    max_delay: float = 60.0
    forget_after: float = 900.0
    trusted_for: float = 86_400.0
    table_size: int = 10_000


@dataclass(frozen=True, slots=True)
class LoginSettings:
    """The throttle's limits and the size of the password-check pool."""

    throttle: ThrottleSettings = field(default_factory=ThrottleSettings)
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)  # niced processes
    queue: int = 16


@dataclass(slots=True)
class _Record:
    failures: int = 0
    last: float = 0.0


class Throttle:
    """The failure records and what they admit (not thread-safe: the caller locks)."""

    def __init__(self, settings: ThrottleSettings) -> None:
        self.settings = settings
        self._sources: OrderedDict[str, _Record] = OrderedDict()
        self._users: OrderedDict[str, _Record] = OrderedDict()
        self._trusted: OrderedDict[tuple[str, str], float] = OrderedDict()

    def _delay(self, record: _Record | None, now: float) -> float:
        """Seconds until the record admits a check (0: now)."""
        if record is None:
            return 0.0
        settings = self.settings
        over = record.failures - settings.free_failures
        if over < 0:
            return 0.0
        wait = min(settings.max_delay, settings.delay * float(2 ** min(over, 64)))
        return max(0.0, record.last + wait - now)

    def _fresh(self, table: OrderedDict[str, _Record], key: str, now: float) -> _Record | None:
        record = table.get(key)
        if record is not None and now - record.last > self.settings.forget_after:
            del table[key]
            return None
        return record

    def _trusted_pair(self, user: str, source: str, now: float) -> bool:
        since = self._trusted.get((user, source))
        return since is not None and now - since <= self.settings.trusted_for

    def wait(self, source: str, user: str, now: float) -> float:
        """Seconds before a check of ``user`` from ``source`` is admitted (0: now)."""
        by_source = self._delay(self._fresh(self._sources, source, now), now)
        by_user = 0.0
        if not self._trusted_pair(user, source, now):
            by_user = self._delay(self._fresh(self._users, user, now), now)
        return max(by_source, by_user)

    def failures(self, source: str, user: str) -> tuple[int, int]:
        """The failures counted now for the source and for the user."""
        source_record, user_record = self._sources.get(source), self._users.get(user)
        return (
            source_record.failures if source_record else 0,
            user_record.failures if user_record else 0,
        )

    def _count(self, table: OrderedDict[str, _Record], key: str, now: float, step: int) -> None:
        record = self._fresh(table, key, now)
        if record is None:
            if step < 0:
                return
            record = table[key] = _Record()
        record.failures = max(0, record.failures + step)
        if step > 0:
            record.last = now
        table.move_to_end(key)
        while len(table) > self.settings.table_size:
            table.popitem(last=False)

    def admitted(self, user: str, now: float) -> None:
        """A check of the user starts: it counts as a failure of the user until
        :meth:`succeeded` says otherwise (a burst of parallel guesses at one user stops at the
        free failures; a burst of logins of different users from one address does not)."""
        self._count(self._users, user, now, 1)

    def failed(self, source: str, now: float) -> None:
        """An admitted check failed: the source's failure (the user's was counted already)."""
        self._count(self._sources, source, now, 1)

    def failed_unadmitted(self, source: str, user: str, now: float) -> None:
        """An attempt failed without a check of its own (it shared another's)."""
        self._count(self._sources, source, now, 1)
        self._count(self._users, user, now, 1)

    def succeeded(self, source: str, user: str, now: float) -> None:
        """A check succeeded: the user's failures are cleared, the pair trusted."""
        self._users.pop(user, None)
        self._trusted[(user, source)] = now
        self._trusted.move_to_end((user, source))
        while len(self._trusted) > self.settings.table_size:
            self._trusted.popitem(last=False)

    def withdrawn(self, user: str, now: float) -> None:
        """An admitted check did not happen (no worker took it): it is no failure."""
        self._count(self._users, user, now, -1)
