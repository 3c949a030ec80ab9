"""The forwarder configuration file (TOML or JSON), validated strictly on load.

Top-level keys: ``forwarder-id`` (cats-t:forwarder-id), ``role`` (a list of ``ingress``,
``egress``), ``state-dir``, ``[server]`` (``address``, ``netconf-port``, ``restconf-port``: the
servers the C-PS edits the steering configuration on), ``[data-plane]`` (``listen``
ADDR:PORT, ``threads``, ``connect-timeout``, ``read-timeout``), ``[[egress]]`` (tunnels:
``forwarder-id`` and the data-plane ``address`` of an egress forwarder), ``[[default-route]]``
(``cs-id`` and ``address``: where fallback level 3 sends the service's traffic) and
``[[users]]`` (``name``, ``password`` or ``password-hash``: the C-PS and operators). Every
refusal names the file and the dotted key.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from agents.common.config import ConfigError, Table, load_document
from agents.common.logins import Login, read_logins
from agents.forwarder.values import Locator, locator

DEFAULT_STATE_DIR = Path("forwarder-state")
_MAX_PORT = 65535

__all__ = ["ConfigError", "ForwarderConfig", "load_config"]


class Role(StrEnum):
    """A role of the forwarder (service-metrics-op 6.2.3 step 7)."""

    INGRESS = "ingress"
    EGRESS = "egress"


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """The forwarder's model-driven servers (ietf-cats-steering over NETCONF and RESTCONF)."""

    address: str = "127.0.0.1"
    netconf_port: int = 8832
    restconf_port: int = 8182  # 0: no RESTCONF listener is useful, but one is always bound


@dataclass(frozen=True, slots=True)
class DataPlane:
    """The client-facing HTTP listener and the forwarding connection pools."""

    address: str = "127.0.0.1"
    port: int = 8900
    threads: int = 32
    connect_timeout: float = 1.0
    read_timeout: float = 30.0


@dataclass(frozen=True, slots=True)
class ForwarderConfig:
    """The whole configuration."""

    forwarder_id: str | None = None
    roles: frozenset[Role] = frozenset({Role.INGRESS})
    state_dir: Path = DEFAULT_STATE_DIR
    server: ServerConfig = field(default_factory=ServerConfig)
    data_plane: DataPlane = field(default_factory=DataPlane)
    tunnels: dict[str, Locator] = field(default_factory=dict)
    default_routes: dict[str, Locator] = field(default_factory=dict)
    users: tuple[Login, ...] = ()


def _locator(table: Table, name: str) -> Locator:
    value: str = table.text(name)
    found = locator(value)
    if found is None or not 0 < found.port <= _MAX_PORT:
        raise table.error(name, f"expected IPv4:port or [IPv6]:port, got {value!r}")
    return found


def _server(table: Table) -> ServerConfig:
    table.allow("address", "netconf-port", "restconf-port")
    return ServerConfig(
        table.text("address", "127.0.0.1"),
        table.integer("netconf-port", 8832, maximum=_MAX_PORT),
        table.integer("restconf-port", 8182, maximum=_MAX_PORT),
    )


def _data_plane(table: Table) -> DataPlane:
    table.allow("listen", "threads", "connect-timeout", "read-timeout")
    address, port = "127.0.0.1", 8900
    if "listen" in table.values:
        address, port = table.endpoint("listen")
    threads: int = table.integer("threads", 32, maximum=1024)
    if threads < 1:
        raise table.error("threads", "expected at least 1")
    return DataPlane(
        address,
        port,
        threads,
        table.seconds("connect-timeout", 1.0),
        table.seconds("read-timeout", 30.0),
    )


def _roles(table: Table) -> frozenset[Role]:
    value = table.values.get("role", ["ingress"])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise table.error("role", "expected a non-empty list of ingress, egress")
    try:
        return frozenset(Role(v) for v in value)
    except ValueError:
        raise table.error("role", f"expected ingress or egress, got {value!r}") from None


def _pairs(tables: list[Table], key: str) -> dict[str, Locator]:
    found: dict[str, Locator] = {}
    for table in tables:
        table.allow(key, "address")
        name = str(table.forwarder(key) if key == "forwarder-id" else table.text(key))
        if name in found:
            raise table.error(key, f"{name!r} is given twice")
        found[name] = _locator(table, "address")
    return found


def parse_config(document: Table, base: Path) -> ForwarderConfig:
    """The configuration of one parsed document (``base`` resolves a relative state-dir)."""
    document.allow(
        "forwarder-id",
        "role",
        "state-dir",
        "server",
        "data-plane",
        "egress",
        "default-route",
        "users",
    )
    forwarder = document.forwarder("forwarder-id") if "forwarder-id" in document.values else None
    state_dir = document.text("state-dir", None)
    return ForwarderConfig(
        forwarder,
        _roles(document),
        base / state_dir if state_dir else DEFAULT_STATE_DIR,
        _server(document.table("server")),
        _data_plane(document.table("data-plane")),
        _pairs(document.tables("egress"), "forwarder-id"),
        _pairs(document.tables("default-route"), "cs-id"),
        read_logins(document.tables("users")),
    )


def load_config(path: Path) -> ForwarderConfig:
    """Read and validate a ``.toml`` or ``.json`` file; raises :class:`ConfigError`."""
    return parse_config(Table(load_document(path), str(path)), path.parent)


def with_overrides(  # noqa: PLR0913 - one keyword per command-line flag
    config: ForwarderConfig,
    *,
    state_dir: Path | None = None,
    forwarder_id: str | None = None,
    roles: frozenset[Role] | None = None,
    listen: tuple[str, int] | None = None,
    netconf_port: int | None = None,
    restconf_port: int | None = None,
) -> ForwarderConfig:
    """The configuration with the command-line flags applied."""
    if forwarder_id is not None:
        forwarder_id = Table({"forwarder-id": forwarder_id}, "--forwarder-id").forwarder(
            "forwarder-id"
        )
    data_plane = config.data_plane
    if listen is not None:
        data_plane = replace(data_plane, address=listen[0], port=listen[1])
    server = config.server
    if netconf_port is not None:
        server = replace(server, netconf_port=netconf_port)
    if restconf_port is not None:
        server = replace(server, restconf_port=restconf_port)
    return replace(
        config,
        state_dir=state_dir or config.state_dir,
        forwarder_id=forwarder_id or config.forwarder_id,
        roles=roles or config.roles,
        data_plane=data_plane,
        server=server,
    )
