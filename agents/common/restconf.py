"""An agent's RESTCONF client of the C-PS: one RPC per POST (RFC 8040 3.6, 4.4.2), HTTP basic
auth; the C-SMA and the agent gateway report through it. The C-NMA reports through the SDK
(:mod:`agents.cnma.sdk_transport`) behind the same :class:`Transport` seam and errors.

:func:`errors_of` turns an ``ietf-restconf:errors`` body into :class:`ErrorItem` values, pure;
:class:`RestconfTransport` is the few lines that touch the socket. A refused RPC raises
:class:`RefusedError` with the C-PS's items; a connection that fails raises
:class:`UnreachableError`, which the agent retries with backoff. No ``requests`` exception
escapes.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import requests

from agents.common.cps import CpsSettings
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.types import Json

YANG_JSON = "application/yang-data+json"


class CpsClientError(CatsError):
    """Root of the errors of an agent's exchanges with the C-PS."""


class RefusedError(CpsClientError):
    """The C-PS answered an RPC with errors (the RESTCONF form of rpc-error)."""

    def __init__(self, status: int, *items: ErrorItem) -> None:
        super().__init__(*items)
        self.status = status

    @property
    def tag(self) -> str:
        """The error-tag of the first item."""
        return self.items[0].tag


class UnreachableError(CpsClientError):
    """The C-PS could not be reached (connection refused, reset or timed out)."""


class Transport(Protocol):
    """How an RPC reaches the C-PS."""

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        """Send the input, return the output (empty when the RPC has none)."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


def _item(error: Any) -> ErrorItem:
    info = error.get("error-info")
    return ErrorItem(
        ErrorType(error.get("error-type", "application")),
        str(error.get("error-tag", "operation-failed")),
        str(error.get("error-message", "")),
        error.get("error-path"),
        error.get("error-app-tag"),
        tuple((str(k), str(v)) for k, v in info.items()) if isinstance(info, dict) else (),
    )


def errors_of(status: int, body: bytes) -> tuple[ErrorItem, ...]:
    """The error items of an error reply (RFC 8040 7.1), or one describing the status."""
    try:
        errors = json.loads(body)["ietf-restconf:errors"]["error"]
        return tuple(_item(error) for error in errors) or _status_only(status)
    except (ValueError, KeyError, TypeError):
        return _status_only(status)


def _status_only(status: int) -> tuple[ErrorItem, ...]:
    return (ErrorItem(ErrorType.TRANSPORT, "operation-failed", f"HTTP status {status}"),)


def output_of(module: str, body: bytes) -> Json:
    """The output members of a 200 reply (``{"module:output": {...}}``)."""
    loaded: Any = json.loads(body) if body.strip() else {}
    found = loaded.get(f"{module}:output", {}) if isinstance(loaded, dict) else {}
    return found if isinstance(found, dict) else {}


class RestconfTransport:
    """POST /restconf/operations/MODULE:OPERATION with JSON input, on one keep-alive session."""

    def __init__(self, settings: CpsSettings) -> None:
        self._settings = settings
        self._session = requests.Session()
        if settings.username is not None:
            self._session.auth = (settings.username, settings.password or "")

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        """One RPC; raises :class:`RefusedError` or :class:`UnreachableError`."""
        url = f"{self._settings.url}/operations/{module}:{operation}"
        body = json.dumps({f"{module}:input": members})
        headers = {"Content-Type": YANG_JSON, "Accept": YANG_JSON}
        try:
            reply = self._session.post(url, body, headers=headers, timeout=self._settings.timeout)
        except requests.RequestException as exc:
            raise UnreachableError(
                ErrorItem(ErrorType.TRANSPORT, "operation-failed", f"{url}: {exc}")
            ) from exc
        if reply.status_code >= 300:  # noqa: PLR2004 - RFC 8040: 200 output, 204 none
            raise RefusedError(reply.status_code, *errors_of(reply.status_code, reply.content))
        return output_of(module, reply.content)

    def close(self) -> None:
        """Close the HTTP session."""
        self._session.close()
