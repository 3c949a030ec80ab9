"""Where the C-PS is and who an agent is to it: the ``cps`` container of an agent's module.

The C-NMA, the C-SMA and the agent gateway report to the C-PS over RESTCONF with HTTP basic
auth (RFC 8040), or over NETCONF on SSH with the same user and password (RFC 6241, RFC 6242)
where the agent speaks it. :func:`parse_cps` reads the table; :func:`read_password` reads a
password file for it or for a ``--password-file`` flag.

A C-PS cluster (docs/cluster.md) has several replicas, each with its own tables: ``url`` names
one and ``replica-url`` the others. The agent reports to each on its own
(:meth:`CpsSettings.each` gives one settings per replica), as a router keeps a session to each
of its route reflectors.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from agents.common.config import ConfigError
from controller.types import Json

DEFAULT_CPS_URL = "http://127.0.0.1:8080/restconf"


@dataclass(frozen=True, slots=True)
class CpsSettings:
    """Where the C-PS is and who the agent is to it (RESTCONF with HTTP basic auth, or
    NETCONF over SSH with the same user and password when ``netconf`` is set)."""

    url: str = DEFAULT_CPS_URL
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout: float = 5.0
    netconf: tuple[str, int] | None = None  # host, port: report over NETCONF instead
    replicas: tuple[str, ...] = ()  # the RESTCONF roots of the cluster's other replicas

    @property
    def urls(self) -> tuple[str, ...]:
        """Every C-PS replica the agent reports to (``url`` first)."""
        return (self.url, *self.replicas)

    def each(self) -> tuple[CpsSettings, ...]:
        """One settings per replica (the same login, one URL each)."""
        return tuple(self.only(url) for url in self.urls)

    def only(self, url: str) -> CpsSettings:
        """These settings for the one replica at ``url``."""
        return replace(self, url=url, replicas=())


def read_password(path: Path, where: str) -> str:
    """The first line of a password file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError.at(where, f"cannot read password file {path}: {exc.strerror}") from exc
    if not lines or not lines[0]:
        raise ConfigError.at(where, f"password file {path} is empty")
    return lines[0]


def parse_cps(entry: Json, base: Path, where: str) -> CpsSettings:
    """A validated ``cps`` container of an agent's module: the C-PS's RESTCONF root, the
    agent's login (a password, or a password file relative to ``base``), the timeout (ms in
    the file) and, where the agent speaks it, a NETCONF endpoint (``host:port``). ``where``
    (the container's data path) places the refusal of an unreadable password file."""
    password = entry.get("password")
    if "password-file" in entry:
        password = read_password(base / entry["password-file"], f"{where}/password-file")
    netconf = entry.get("netconf")
    host, _, port = (netconf or "").rpartition(":")
    return CpsSettings(
        entry["url"].rstrip("/"),
        entry.get("username"),
        password,
        entry["timeout-ms"] / 1000,
        None if netconf is None else (host.strip("[]"), int(port)),
        tuple(str(url).rstrip("/") for url in entry.get("replica-url", ())),
    )
