"""The RESTCONF client of the operator commands (``catsctl show | config | explain | audit``).

Where the server is and who is asking come from, in this order: the flags (``--url``,
``--user``, ``--password-file``), the environment (``CATSCTL_URL``, ``CATSCTL_USER``,
``CATSCTL_PASSWORD``), and a TOML file (``--config``, default ``~/.config/catsctl/config.toml``)
with ``url``, ``user`` and ``password``, which must be readable by its owner only (0600): a
password never rests in a file another user can read.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_CONFIG = Path("~/.config/catsctl/config.toml")
JSON = "application/yang-data+json"
TIMEOUT_S = 30.0


class OperatorError(Exception):
    """What an operator command could not do, in one line that says what to do next."""


@dataclass(frozen=True, slots=True)
class Login:
    """Where the server is and the credentials to use."""

    url: str
    user: str | None
    password: str | None


def _private(path: Path) -> dict[str, Any]:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise OperatorError(
            f"{path} is mode {mode:o}: it holds a password; make it readable by you only "
            f"(chmod 600 {path})"
        )
    with path.open("rb") as handle:
        return tomllib.load(handle)


def login(
    url: str | None, user: str | None, password_file: Path | None, config: Path | None
) -> Login:
    """The login from flags, environment and the config file (first found wins)."""
    path = (config or DEFAULT_CONFIG).expanduser()
    stored: dict[str, Any] = {}
    if path.exists():
        stored = _private(path)
    elif config is not None:
        raise OperatorError(f"--config {config}: no such file")
    password = None
    if password_file is not None:
        password = password_file.read_text(encoding="utf-8").splitlines()[0]
    return Login(
        url or os.environ.get("CATSCTL_URL") or str(stored.get("url", DEFAULT_URL)),
        user or os.environ.get("CATSCTL_USER") or stored.get("user"),
        password or os.environ.get("CATSCTL_PASSWORD") or stored.get("password"),
    )


def _problem(reply: requests.Response) -> str:
    try:
        errors = reply.json()["ietf-restconf:errors"]["error"]
        return "; ".join(
            f"{e.get('error-tag')}: {e.get('error-message', '')}"
            + (f" at {e['error-path']}" if e.get("error-path") else "")
            for e in errors
        )
    except (ValueError, KeyError, TypeError):
        return reply.text.strip()[:200]


class Client:
    """A few RESTCONF verbs against one server."""

    def __init__(self, credentials: Login) -> None:
        self._login = credentials
        self._session = requests.Session()
        if credentials.user is not None:
            self._session.auth = (credentials.user, credentials.password or "")

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        url = f"{self._login.url.rstrip('/')}/restconf/{path}"
        try:
            reply = self._session.request(method, url, timeout=TIMEOUT_S, **kwargs)
        except requests.RequestException as exc:
            raise OperatorError(
                f"cannot reach {self._login.url}: {exc.__class__.__name__}; is catsctl serve "
                "running there (--url, CATSCTL_URL)?"
            ) from exc
        if reply.status_code == 401:  # noqa: PLR2004
            raise OperatorError(
                "401: the server did not accept the credentials "
                "(--user and --password-file, CATSCTL_USER and CATSCTL_PASSWORD, or --config)"
            )
        return reply

    def get(self, path: str, **params: str) -> Any:
        """The JSON of a data resource ({} when it does not exist)."""
        reply = self._request("GET", f"data/{path}", params=params, headers={"Accept": JSON})
        if reply.status_code == 404:  # noqa: PLR2004
            return {}
        if reply.status_code != 200:  # noqa: PLR2004
            raise OperatorError(f"GET {path}: {reply.status_code}: {_problem(reply)}")
        return reply.json()

    def rpc(self, name: str, members: dict[str, Any]) -> dict[str, Any]:
        """Invoke ``module:rpc`` with ``members``; its output members."""
        module = name.split(":", 1)[0]
        body = json.dumps({f"{module}:input": members})
        headers = {"Content-Type": JSON, "Accept": JSON}
        reply = self._request("POST", f"operations/{name}", data=body, headers=headers)
        if reply.status_code == 204:  # noqa: PLR2004
            return {}
        if reply.status_code != 200:  # noqa: PLR2004
            raise OperatorError(f"{name}: {reply.status_code}: {_problem(reply)}")
        output: dict[str, Any] = reply.json().get(f"{module}:output", {})
        return output
