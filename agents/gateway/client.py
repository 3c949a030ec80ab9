"""The gateway's client of the C-PS: the RPCs of ietf-cats-agent-selection over RESTCONF (RFC
8040 3.6, 4.4.2) with :class:`agents.common.restconf.RestconfTransport`, and one read of a
session's state (RFC 8040 4.3) for the decision records the C-PS kept (M39). :class:`Cps` is
the seam the runner uses; a refused request raises :class:`RefusedError`, a C-PS out of reach
:class:`UnreachableError` (both :class:`~controller.errors.CatsError`)."""

from __future__ import annotations

from typing import Protocol
from urllib.parse import quote

import requests

from agents.common.restconf import (
    YANG_JSON,
    RefusedError,
    RestconfTransport,
    UnreachableError,
    errors_of,
)
from controller.errors import ErrorItem, ErrorType
from controller.types import Json

AS = "ietf-cats-agent-selection"
NOT_FOUND = 404

__all__ = ["AS", "Cps", "RefusedError", "RestconfCps", "UnreachableError", "session_path"]


class Cps(Protocol):
    """What the gateway needs of the C-PS."""

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        """Send an RPC input, return its output (empty when the RPC has none)."""
        ...

    def session(self, session_id: str) -> Json | None:
        """The session's state (``agent-selection/sessions/session``), None when unknown."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


def session_path(session_id: str) -> str:
    """The data resource of one session (RFC 8040 3.5.3: the key percent-encoded)."""
    return f"data/{AS}:agent-selection/sessions/session={quote(session_id, safe='')}"


class RestconfCps(RestconfTransport):
    """RPCs by POST and the session by GET, on one keep-alive HTTP session."""

    def session(self, session_id: str) -> Json | None:
        """GET the session; raises :class:`RefusedError` or :class:`UnreachableError`."""
        url = f"{self._settings.url}/{session_path(session_id)}"
        headers = {"Accept": YANG_JSON}
        try:
            reply = self._session.get(url, headers=headers, timeout=self._settings.timeout)
        except requests.RequestException as exc:
            raise UnreachableError(
                ErrorItem(ErrorType.TRANSPORT, "operation-failed", f"{url}: {exc}")
            ) from exc
        if reply.status_code == NOT_FOUND:
            return None
        if reply.status_code >= 300:  # noqa: PLR2004 - RFC 8040: 200 with the data
            raise RefusedError(reply.status_code, *errors_of(reply.status_code, reply.content))
        entries = reply.json().get(f"{AS}:session", [])
        return dict(entries[0]) if entries else None
