"""A configuration read from running (RFC 8342 5.1), parsed once per revision of running.

Both C-PS applications read their configuration at every request: :class:`ParsedRunning` reads
and parses it only when the entity-tag of running (RFC 8040 3.4.1.2) has changed since the last
parse, and hands out the same parsed value until then. :func:`container` reads one top-level
container of running as its RFC 7951 members.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from controller.datastore.api import SYSTEM, DatastoreName, ReadRequest, ServerCore
from controller.types import DataPath, Json

T = TypeVar("T")


def container(core: ServerCore, module: str, name: str) -> Json:
    """The members of the top-level container ``module:name`` of running ({} if it is absent)."""
    path = DataPath(f"/{module}:{name}")
    document = core.read(ReadRequest(DatastoreName.RUNNING, path), SYSTEM).document
    loaded: Any = json.loads(document) if document else {}
    found = loaded.get(f"{module}:{name}", {}) if isinstance(loaded, dict) else {}
    return found if isinstance(found, dict) else {}


class ParsedRunning(ABC, Generic[T]):
    """Reads a configuration from running, parsed once per revision of running."""

    def __init__(self, core: Callable[[], ServerCore]) -> None:
        self._core = core
        self._guard = threading.Lock()
        self._cached: tuple[str, T] | None = None

    def __call__(self) -> T:
        core = self._core()
        etag = core.revision(DatastoreName.RUNNING, None).etag
        with self._guard:
            if self._cached is not None and self._cached[0] == etag:
                return self._cached[1]
        parsed = self.read(core)
        with self._guard:
            self._cached = (etag, parsed)
        return parsed

    @abstractmethod
    def read(self, core: ServerCore) -> T:
        """Read the configuration from running and parse it."""
