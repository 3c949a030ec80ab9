"""SSH authentication against ietf-system local users (RFC 7317 6): passwords and keys.

Passwords are crypt hashes checked as RESTCONF checks them (outcomes cached per hash and
password digest); public keys are matched against the user's ``authorized-key`` list
(algorithm and base64 key-data, as ``~/.ssh/authorized_keys`` writes them).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass

from controller.datastore.api import SYSTEM, Content, DatastoreName, ReadRequest, ServerCore
from controller.errors import CatsError
from controller.restconf.auth import verify

AUTH_PATH = "/ietf-system:system/authentication"
CACHE_SIZE = 1024
_SALT = b"netconf-password-cache"


@dataclass(frozen=True, slots=True)
class UserRecord:
    """One local user: crypt hash (if any) and authorized keys (algorithm, base64 data)."""

    password: str | None
    keys: frozenset[tuple[str, str]]


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


class Credentials:
    """Checks SSH credentials against running, re-read when its users subtree changes."""

    def __init__(self, core: ServerCore) -> None:
        self._core = core
        self._lock = threading.Lock()
        self._etag: str | None = None
        self._users: dict[str, UserRecord] = {}
        self._cache: OrderedDict[tuple[str, str, bytes], bool] = OrderedDict()

    def users(self) -> dict[str, UserRecord]:
        """The local users now."""
        revision = self._core.revision(DatastoreName.RUNNING, AUTH_PATH)
        with self._lock:
            if revision.etag == self._etag:
                return self._users
        request = ReadRequest(DatastoreName.RUNNING, AUTH_PATH, content=Content.CONFIG)
        try:
            document = self._core.read(request, SYSTEM).document
        except CatsError:
            document = None
        loaded = json.loads(document) if document else {}
        users = users_of(loaded if isinstance(loaded, dict) else {})
        with self._lock:
            self._etag, self._users = revision.etag, users
        return users

    def password(self, user: str, password: str) -> bool:
        """Whether the password is the user's."""
        record = self.users().get(user)
        if record is None or record.password is None:
            return False
        digest = hmac.new(_SALT, password.encode(), hashlib.sha256).digest()
        key = (user, record.password, digest)
        with self._lock:
            known = self._cache.get(key)
        if known is None:
            known = verify(password, record.password)
            with self._lock:
                self._cache[key] = known
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return known

    def public_key(self, user: str, algorithm: str, key_data: str) -> bool:
        """Whether the key is one of the user's authorized keys."""
        record = self.users().get(user)
        return record is not None and (algorithm, key_data) in record.keys
