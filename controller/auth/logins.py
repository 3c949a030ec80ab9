"""Password logins of both northbounds: throttled, checked off the request threads, logged
and counted.

One attempt (user, password, transport, source address) goes:

1. past the throttle (:mod:`.throttle`): a source or user in its delay is refused at once,
   without a check (``THROTTLED``), so the delay cannot be used to test guesses cheaply;
2. to the cache of successful checks (:class:`~.passwords.SuccessCache`): a known-good
   password is admitted without a check;
3. to a worker process (:mod:`.hashing`); an unknown user is checked against a dummy hash of
   the same cost, so wrong passwords and unknown users cannot be told apart by time. A full
   queue refuses at once (``BUSY``). Attempts with a credential already being checked wait
   for that check (a client opening many connections at once costs one check).

A failed check is logged (user, source, transport) and counted; the counters are the
operational state ``cats-controller-admin:logins``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from enum import StrEnum

from controller.audit import login_failed
from controller.auth.hashing import HashPool, PoolBusyError
from controller.auth.passwords import SuccessCache, dummy_hash
from controller.auth.throttle import LoginSettings, Throttle

LOG = logging.getLogger("catsctl.auth")
TRANSPORTS = ("restconf", "netconf")
LOGINS_PATH = "/cats-controller-admin:logins"
_COUNTERS = ("failed", "throttled", "busy", "refused-connections", "timed-out")


class Outcome(StrEnum):
    """How an attempt ended."""

    OK = "ok"
    FAILED = "failed"
    THROTTLED = "throttled"
    BUSY = "busy"


#: Checks a password against a crypt hash (a :class:`~.hashing.HashPool`'s ``check``).
Checker = Callable[[str, str], bool]
FLIGHT_WAIT_S = 150.0


class _Flight:
    """One check in progress, which attempts with the same credential wait for."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._outcome = Outcome.BUSY

    def finish(self, outcome: Outcome) -> None:
        self._outcome = outcome
        self._done.set()

    def outcome(self) -> Outcome:
        return self._outcome if self._done.wait(FLIGHT_WAIT_S) else Outcome.BUSY


def printable(text: str, limit: int = 64) -> str:
    """A client's string as a log shows it: quoted, escaped, cut (no line of its own)."""
    shown = text if len(text) <= limit else text[:limit] + "..."
    return repr(shown)


class Logins:
    """Password logins against the hashes ``hashes`` returns (user name -> crypt hash)."""

    def __init__(
        self,
        hashes: Callable[[], Mapping[str, str]],
        settings: LoginSettings | None = None,
        *,
        checker: Checker | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings or LoginSettings()
        self._hashes = hashes
        self._pool: HashPool | None = None
        if checker is None:
            self._pool = HashPool(self.settings.workers, self.settings.queue)
            checker = self._pool.check
        self._check = checker
        self._clock = clock
        self._throttle = Throttle(self.settings.throttle)
        self._cache = SuccessCache()
        self._flights: dict[tuple[str, str, bytes], _Flight] = {}
        self._lock = threading.Lock()
        self._counters = {(t, name): 0 for t in TRANSPORTS for name in _COUNTERS}
        self._since = datetime.now(UTC)

    def close(self) -> None:
        """Stop the password-check workers."""
        if self._pool is not None:
            self._pool.close()

    def count(self, transport: str, counter: str) -> None:
        """Add one to a counter (``refused-connections``, ``timed-out``: the transports')."""
        with self._lock:
            key = (transport, counter)
            self._counters[key] = self._counters.get(key, 0) + 1

    def login(self, user: str, password: str, transport: str, source: str) -> Outcome:
        """Check one attempt; see the module's description for the steps."""
        hashes = self._hashes()
        crypt_hash = hashes.get(user)
        with self._lock:
            wait = self._throttle.wait(source, user, self._clock())
        if wait > 0:
            self.count(transport, "throttled")
            LOG.debug("auth: throttled %s from %s via %s", printable(user), source, transport)
            return Outcome.THROTTLED
        if crypt_hash is not None and (user, crypt_hash, password) in self._cache:
            return Outcome.OK
        key = self._cache.entry(user, crypt_hash or "", password)
        with self._lock:
            flight = self._flights.get(key)
            leading = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
                self._throttle.admitted(user, self._clock())
        if leading:
            outcome = self._check_once(user, password, crypt_hash, hashes)
            with self._lock:
                del self._flights[key]
                if outcome is Outcome.FAILED:
                    self._throttle.failed(source, self._clock())
            flight.finish(outcome)
        else:  # the same credential is being checked now: its outcome is this one's too
            outcome = flight.outcome()
            if outcome is Outcome.FAILED:
                with self._lock:
                    self._throttle.failed_unadmitted(source, user, self._clock())
        if outcome is Outcome.OK:
            with self._lock:
                self._throttle.succeeded(source, user, self._clock())
        else:
            self._refused(user, transport, source, outcome)
        return outcome

    def _check_once(
        self, user: str, password: str, crypt_hash: str | None, hashes: Mapping[str, str]
    ) -> Outcome:
        """The one check of a credential (a dummy hash for an unknown user)."""
        try:
            ok = self._check(password, crypt_hash or dummy_hash(hashes)) and bool(crypt_hash)
        except PoolBusyError:
            with self._lock:  # nothing was checked: no failure to count against them
                self._throttle.withdrawn(user, self._clock())
            return Outcome.BUSY
        if ok and crypt_hash is not None:
            self._cache.add(user, crypt_hash, password)
            return Outcome.OK
        return Outcome.FAILED

    def _refused(self, user: str, transport: str, source: str, outcome: Outcome) -> None:
        self.count(transport, outcome.value)
        if outcome is not Outcome.FAILED:
            return
        login_failed(user, transport, source)  # the audit record and the metric
        with self._lock:
            by_source, by_user = self._throttle.failures(source, user)
        LOG.warning(
            "auth: login failed: user %s from %s via %s (%d recent failures from there, "
            "%d for the user)",
            printable(user),
            source,
            transport,
            by_source,
            by_user,
        )

    def known_good(self, user: str, password: str) -> bool:
        """Whether the password was checked good for the user's current hash (cached)."""
        crypt_hash = self._hashes().get(user)
        return crypt_hash is not None and (user, crypt_hash, password) in self._cache

    def retry_after(self, user: str, source: str) -> float:
        """Seconds until an attempt of ``user`` from ``source`` is checked again."""
        with self._lock:
            return self._throttle.wait(source, user, self._clock())

    def state(self) -> dict[str, object]:
        """``cats-controller-admin:logins`` as RFC 7951 JSON (the core's state provider)."""
        with self._lock:
            counters = dict(self._counters)
        rows = [
            {"name": t, **{name: str(counters[(t, name)]) for name in _COUNTERS}}
            for t in TRANSPORTS
        ]
        return {
            "cats-controller-admin:logins": {
                "discontinuity-time": self._since.isoformat(),
                "transport": rows,
            }
        }
