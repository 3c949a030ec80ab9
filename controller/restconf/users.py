"""The users and NACM groups RESTCONF authenticates against, read from running.

``ietf-system:system/authentication/user`` (RFC 7317) holds name and crypt-hash password;
``ietf-netconf-acm:nacm/groups/group`` (RFC 8341) the groups. Both are re-read only when the
revision of their subtree changes, so a request costs one revision lookup.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from controller.datastore.api import SYSTEM, Content, DatastoreName, ReadRequest, ServerCore
from controller.errors import CatsError

AUTH_PATH = "/ietf-system:system/authentication"
GROUPS_PATH = "/ietf-netconf-acm:nacm/groups"


@dataclass(frozen=True, slots=True)
class _Cached:
    etag: str | None = None
    value: dict[str, object] = field(default_factory=dict)


def users_of(document: dict[str, object]) -> dict[str, str]:
    """User name to crypt hash, from the RFC 7951 JSON of ``system/authentication``."""
    auth = document.get("ietf-system:authentication", {})
    users = auth.get("user", []) if isinstance(auth, dict) else []
    return {
        str(user["name"]): str(user["password"])
        for user in users
        if isinstance(user, dict) and "password" in user
    }


def groups_of(document: dict[str, object]) -> dict[str, tuple[str, ...]]:
    """User name to NACM group names, from the RFC 7951 JSON of ``nacm/groups``."""
    groups = document.get("ietf-netconf-acm:groups", {})
    found: dict[str, list[str]] = {}
    for group in groups.get("group", []) if isinstance(groups, dict) else []:
        if isinstance(group, dict):
            for user in group.get("user-name", []):
                found.setdefault(str(user), []).append(str(group["name"]))
    return {user: tuple(names) for user, names in found.items()}


class LocalUsers:
    """Reads users and groups from running, cached by the subtrees' entity-tags."""

    def __init__(self, core: ServerCore) -> None:
        self._core = core
        self._lock = threading.Lock()
        self._cache: dict[str, _Cached] = {}

    def _document(self, path: str) -> dict[str, object]:
        revision = self._core.revision(DatastoreName.RUNNING, path)
        cached = self._cache.get(path)
        if cached is not None and cached.etag == revision.etag:
            return cached.value
        request = ReadRequest(DatastoreName.RUNNING, path, content=Content.CONFIG)
        try:
            document = self._core.read(request, SYSTEM).document
        except CatsError:
            document = None
        value = json.loads(document) if document else {}
        with self._lock:
            self._cache[path] = _Cached(revision.etag, value)
        return value if isinstance(value, dict) else {}

    def users(self) -> Mapping[str, str]:
        """User name to crypt hash."""
        return users_of(self._document(AUTH_PATH))

    def groups(self, user: str) -> tuple[str, ...]:
        """The NACM groups of a user."""
        return groups_of(self._document(GROUPS_PATH)).get(user, ())
