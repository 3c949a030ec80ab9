"""The SSH side of a NETCONF connection (RFC 6242) before its session: who may try to log in,
how often and for how long.

As OpenSSH's ``MaxStartups``, ``PerSourceMaxStartups``, ``LoginGraceTime`` and
``MaxAuthTries`` do: at most ``max_startups`` connections are unauthenticated at once (and
``max_startups_per_source`` from one address), a further one is closed at accept; a
connection that has not opened its ``netconf`` subsystem within ``login_grace_time`` seconds
is closed; a connection whose ``max_auth_tries``-th attempt fails is closed. Unauthenticated
connections are counted apart from the sessions, so a flood of them never takes a slot of an
authenticated user. Passwords go through the throttled, off-thread login of
:class:`Credentials`.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Protocol

import paramiko
from paramiko.common import (
    AUTH_FAILED,
    AUTH_SUCCESSFUL,
    OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED,
    OPEN_SUCCEEDED,
)

from controller.datastore.api import Principal
from controller.netconf.bounds import LoginBounds

TRANSPORT = "netconf"


class Credentials(Protocol):
    """The local users SSH authenticates against (:class:`controller.auth.LocalUsers`)."""

    def login(self, user: str, password: str, transport: str, source: str) -> str:
        """One password attempt: ``ok``, ``failed``, ``throttled`` or ``busy``."""

    def check_key(self, user: str, algorithm: str, key_data: str) -> bool:
        """Whether the key (algorithm, base64 data) is one of the user's authorized keys."""

    def principal(self, user: str, transport: str, source: str) -> Principal:
        """The principal an authenticated user's session runs as."""

    def count(self, transport: str, counter: str) -> None:
        """Count a refused or timed-out connection (``cats-controller-admin:logins``)."""


class Startups:
    """The unauthenticated connections now, in all and per source address (thread-safe)."""

    def __init__(self, bounds: LoginBounds) -> None:
        self._bounds = bounds
        self._by_source: Counter[str] = Counter()
        self._lock = threading.Lock()

    def admit(self, source: str) -> bool:
        """Count a new connection from ``source`` unless that passes a bound."""
        with self._lock:
            total = sum(self._by_source.values())
            if total >= self._bounds.max_startups:
                return False
            if self._by_source[source] >= self._bounds.max_startups_per_source:
                return False
            self._by_source[source] += 1
            return True

    def done(self, source: str) -> None:
        """A counted connection authenticated or ended."""
        with self._lock:
            self._by_source[source] -= 1
            if self._by_source[source] <= 0:
                del self._by_source[source]

    def __len__(self) -> int:
        with self._lock:
            return sum(self._by_source.values())


class SshAuth(paramiko.ServerInterface):
    """Authentication and channel policy of one connection."""

    def __init__(
        self, credentials: Credentials, source: str, bounds: LoginBounds, startups: Startups
    ) -> None:
        self._credentials = credentials
        self.source = source
        self._bounds = bounds
        self._startups = startups
        self.failures = 0
        self._counted = True  # in startups until it authenticates (or ends)
        self._lock = threading.Lock()
        self.user: str | None = None
        self.channel: paramiko.Channel | None = None
        self.settled = threading.Event()  # the subsystem is open, or the tries are used up
        self.exhausted = False

    def release(self) -> None:
        """The connection leaves the unauthenticated ones (authenticated, or ended)."""
        with self._lock:
            counted, self._counted = self._counted, False
        if counted:
            self._startups.done(self.source)

    def count(self, counter: str) -> None:
        """Count this connection's refusal (``cats-controller-admin:logins``)."""
        self._credentials.count(TRANSPORT, counter)

    def _outcome(self, user: str, *, ok: bool) -> int:
        if ok:
            self.user = user
            self.release()
            return AUTH_SUCCESSFUL
        self.failures += 1
        if self.failures >= self._bounds.max_auth_tries:
            self.exhausted = True
            self.settled.set()  # the connection's thread closes it
        return AUTH_FAILED

    def get_allowed_auths(self, username: str) -> str:
        del username
        return "password,publickey"

    def check_auth_password(self, username: str, password: str) -> int:
        if self.exhausted:
            return AUTH_FAILED
        outcome = self._credentials.login(username, password, TRANSPORT, self.source)
        return self._outcome(username, ok=outcome == "ok")

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        if self.exhausted:
            return AUTH_FAILED
        known = self._credentials.check_key(username, key.get_name(), key.get_base64())
        return self._outcome(username, ok=known)

    def check_channel_request(self, kind: str, chanid: int) -> int:
        del chanid
        if kind == "session" and self.user is not None:
            return OPEN_SUCCEEDED
        return OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_subsystem_request(self, channel: paramiko.Channel, name: str) -> bool:
        if name != "netconf" or self.channel is not None:
            return False
        self.channel = channel
        self.settled.set()
        return True
