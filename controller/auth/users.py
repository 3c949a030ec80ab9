"""The local users and NACM groups both northbounds authenticate against, read from running.

``ietf-system:system/authentication/user`` (RFC 7317 6) holds name, crypt-hash password and
authorized keys (algorithm and base64 key-data, as ``~/.ssh/authorized_keys`` writes them);
``ietf-netconf-acm:nacm/groups/group`` (RFC 8341) the groups. Both are re-read only when the
revision of their subtree changes, so a check costs one revision lookup.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar, cast

from controller.auth.logins import Checker, Logins
from controller.auth.throttle import LoginSettings
from controller.datastore.api import (
    SYSTEM,
    Content,
    DatastoreName,
    Principal,
    ReadRequest,
    ServerCore,
)
from controller.errors import CatsError
from controller.types import DataPath

LOG = logging.getLogger("catsctl.auth")
AUTH_PATH = DataPath("/ietf-system:system/authentication")
GROUPS_PATH = DataPath("/ietf-netconf-acm:nacm/groups")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class UserRecord:
    """One local user: crypt hash (if any) and authorized keys (algorithm, base64 data)."""

    password: str | None
    keys: frozenset[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class _Cached:
    etag: str | None
    value: object


def users_of(document: dict[str, object]) -> dict[str, UserRecord]:
    """The users of the RFC 7951 JSON of ``system/authentication``."""
    auth = document.get("ietf-system:authentication", {})
    users = auth.get("user", []) if isinstance(auth, dict) else []
    found: dict[str, UserRecord] = {}
    for user in users:
        if not isinstance(user, dict):
            continue
        keys = frozenset(
            (str(key.get("algorithm", "")), str(key.get("key-data", "")))
            for key in user.get("authorized-key", [])
            if isinstance(key, dict)
        )
        password = user.get("password")
        found[str(user["name"])] = UserRecord(str(password) if password else None, keys)
    return found


def groups_of(document: dict[str, object]) -> dict[str, tuple[str, ...]]:
    """User name to NACM group names, from the RFC 7951 JSON of ``nacm/groups``."""
    groups = document.get("ietf-netconf-acm:groups", {})
    found: dict[str, list[str]] = {}
    for group in groups.get("group", []) if isinstance(groups, dict) else []:
        if isinstance(group, dict):
            for user in group.get("user-name", []):
                found.setdefault(str(user), []).append(str(group["name"]))
    return {user: tuple(names) for user, names in found.items()}


def _hashes(users: Mapping[str, UserRecord]) -> dict[str, str]:
    return {name: user.password for name, user in users.items() if user.password is not None}


class LocalUsers:
    """Users and groups of running, parsed once per revision of their subtree.

    ``recovery_user`` names the user whose sessions bypass access control (RFC 8341 3.2: a
    recovery session, for when the policy locks everybody out); every such session is logged.
    """

    def __init__(
        self,
        core: ServerCore,
        recovery_user: str | None = None,
        logins: LoginSettings | None = None,
        *,
        checker: Checker | None = None,
    ) -> None:
        self._core = core
        self._recovery = recovery_user
        self._lock = threading.Lock()
        self._cache: dict[str, _Cached] = {}
        self.logins = Logins(self.password_hashes, logins, checker=checker)

    def close(self) -> None:
        """Stop the password-check workers."""
        self.logins.close()

    def _parsed(self, path: DataPath, parse: Callable[[dict[str, object]], T]) -> T:
        revision = self._core.revision(DatastoreName.RUNNING, path)
        with self._lock:
            cached = self._cache.get(path)
        if cached is not None and cached.etag == revision.etag:
            return cast(T, cached.value)
        request = ReadRequest(DatastoreName.RUNNING, path, content=Content.CONFIG)
        try:
            document = self._core.read(request, SYSTEM).document
        except CatsError:
            document = None
        loaded = json.loads(document) if document else {}
        value = parse(loaded if isinstance(loaded, dict) else {})
        with self._lock:
            self._cache[path] = _Cached(revision.etag, value)
        return value

    def users(self) -> Mapping[str, UserRecord]:
        """The local users now, by name."""
        return self._parsed(AUTH_PATH, users_of)

    def password_hashes(self) -> Mapping[str, str]:
        """User name to crypt hash, for the users that have a password."""
        return _hashes(self.users())

    def login(self, user: str, password: str, transport: str, source: str) -> str:
        """One password login (:meth:`controller.auth.logins.Logins.login`): ``ok``,
        ``failed``, ``throttled`` or ``busy``."""
        return self.logins.login(user, password, transport, source).value

    def count(self, transport: str, counter: str) -> None:
        """Count a transport's refusal (``cats-controller-admin:logins``)."""
        self.logins.count(transport, counter)

    def known_good(self, user: str, password: str) -> bool:
        """Whether this password of the user was checked good before and the user's hash is
        unchanged since (no check, no throttle: for a connection that already proved it)."""
        return self.logins.known_good(user, password)

    def check_key(self, user: str, algorithm: str, key_data: str) -> bool:
        """Whether the key is one of the user's authorized keys."""
        record = self.users().get(user)
        return record is not None and (algorithm, key_data) in record.keys

    def groups(self, user: str) -> tuple[str, ...]:
        """The NACM groups of a user."""
        return self._parsed(GROUPS_PATH, groups_of).get(user, ())

    def principal(self, user: str, transport: str, source: str) -> Principal:
        """The principal an authenticated user's session or request runs as. NACM takes the
        user's groups from ``nacm/groups`` itself; no transport reports external groups."""
        if self._recovery is not None and user == self._recovery:
            LOG.warning(
                "nacm: recovery session of %s via %s from %s: access control is bypassed",
                user,
                transport,
                source,
            )
            return Principal(user, recovery=True)
        return Principal(user)
