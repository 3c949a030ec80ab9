"""The demo's RESTCONF client of the C-PS (RFC 8040 3.6 operations, 3.5.4 data reads) and
the HTTP calls to the SCIs and service instances."""

from __future__ import annotations

import contextlib
from typing import Any

import requests

JSON = "application/yang-data+json"
TIMEOUT_S = 10
NO_CONTENT = 204


class RestconfError(Exception):
    """A RESTCONF request that did not succeed: its status and ``ietf-restconf:errors``."""


class Restconf:
    """Operations and data reads against one RESTCONF root, with basic authentication."""

    def __init__(self, root: str, user: str, password: str) -> None:
        self.root = root
        self._session = requests.Session()
        self._session.auth = (user, password)

    def close(self) -> None:
        """Close the keep-alive session."""
        self._session.close()

    def call(self, module: str, operation: str, members: dict[str, Any]) -> dict[str, Any]:
        """POST an operation's input; its output members (empty without output)."""
        reply = self._session.post(
            f"{self.root}/operations/{module}:{operation}",
            json={f"{module}:input": members},
            headers={"Content-Type": JSON, "Accept": JSON},
            timeout=TIMEOUT_S,
        )
        if reply.status_code == NO_CONTENT:
            return {}
        if not reply.ok:
            raise RestconfError(f"{operation}: {reply.status_code} {reply.text}")
        output: dict[str, Any] = reply.json()[f"{module}:output"]
        return output

    def get(self, path: str) -> dict[str, Any]:
        """GET a data resource; empty when it has no data (204 or 404)."""
        reply = self._session.get(
            f"{self.root}/data/{path}", headers={"Accept": JSON}, timeout=TIMEOUT_S
        )
        if reply.status_code in (NO_CONTENT, 404):
            return {}
        if not reply.ok:
            raise RestconfError(f"GET {path}: {reply.status_code} {reply.text}")
        document: dict[str, Any] = reply.json()
        return document

    def put(self, path: str, document: dict[str, Any]) -> None:
        """PUT a data resource (RFC 8040 4.5): create or replace it."""
        reply = self._session.put(
            f"{self.root}/data/{path}",
            json=document,
            headers={"Content-Type": JSON, "Accept": JSON},
            timeout=TIMEOUT_S,
        )
        if not reply.ok:
            raise RestconfError(f"PUT {path}: {reply.status_code} {reply.text}")

    def up(self) -> bool:
        """Whether the server answers (any HTTP status)."""
        with contextlib.suppress(requests.RequestException):
            self._session.get(f"{self.root}/", timeout=1)
            return True
        return False


def http_ok(url: str) -> bool:
    """Whether a GET of ``url`` answers 2xx."""
    with contextlib.suppress(requests.RequestException):
        return requests.get(url, timeout=1).ok
    return False


def post_json(url: str, document: dict[str, Any]) -> dict[str, Any]:
    """POST a JSON document; the JSON reply."""
    reply = requests.post(url, json=document, timeout=TIMEOUT_S)
    reply.raise_for_status()
    answer: dict[str, Any] = reply.json()
    return answer


def get_status(url: str, headers: dict[str, str] | None = None) -> int:
    """The status of a GET (0 when the connection failed)."""
    try:
        return requests.get(url, headers=headers, timeout=TIMEOUT_S).status_code
    except requests.RequestException:
        return 0
