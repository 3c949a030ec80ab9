"""Report delivery to the C-SMA over RESTCONF (sci-implementation 7.1; RFC 8040 3.6)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import requests

from agents.sci.errors import SciError, refused
from agents.sci.report import RPC
from controller.types import Json

JSON = "application/yang-data+json"


@dataclass(frozen=True, slots=True)
class Credentials:
    """HTTP basic credentials for the C-SMA."""

    username: str
    password: str


def read_password(path: Path) -> str:
    """The first line of a password file."""
    return path.read_text(encoding="utf-8").splitlines()[0] if path.stat().st_size else ""


def operation_url(restconf_root: str) -> str:
    """``{root}/operations/ietf-cats-sci:report-sci-metrics`` (RFC 8040 3.3.2)."""
    return f"{restconf_root.rstrip('/')}/operations/{RPC}"


def accepted_sequence(reply_body: str) -> int:
    """The ``accepted-sequence-number`` of the RPC output.

    Raises:
        SciError: when the body is not the RPC's output.
    """
    try:
        output: Json = json.loads(reply_body)["ietf-cats-sci:output"]
        return int(output["accepted-sequence-number"])
    except (ValueError, KeyError, TypeError) as exc:
        raise refused(f"unexpected report-sci-metrics output: {reply_body[:200]!r}") from exc


class RestconfSender:
    """POSTs reports to the C-SMA's RESTCONF server with one keep-alive session."""

    def __init__(
        self, restconf_root: str, credentials: Credentials | None, timeout_s: float
    ) -> None:
        self._url = operation_url(restconf_root)
        self._session = requests.Session()
        if credentials is not None:
            self._session.auth = (credentials.username, credentials.password)
        self._timeout = timeout_s

    def send(self, members: Json) -> int:
        """Invoke report-sci-metrics; the accepted sequence number.

        Raises:
            SciError: when the C-SMA cannot be reached or refuses the report.
        """
        body = json.dumps({"ietf-cats-sci:input": members})
        headers = {"Content-Type": JSON, "Accept": JSON}
        try:
            reply = self._session.post(self._url, data=body, headers=headers, timeout=self._timeout)
        except requests.RequestException as exc:
            raise refused(f"C-SMA unreachable: {exc}", tag="operation-failed") from exc
        if reply.status_code != 200:  # noqa: PLR2004
            raise refused(
                f"C-SMA refused the report ({reply.status_code}): {reply.text[:500]}",
                tag="operation-failed",
            )
        return accepted_sequence(reply.text)

    def close(self) -> None:
        """Close the keep-alive connections."""
        self._session.close()


__all__ = ["Credentials", "RestconfSender", "SciError", "accepted_sequence", "operation_url"]
