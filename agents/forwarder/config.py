"""The forwarder configuration file (TOML or JSON): the ``cats-forwarder-config`` module.

The file's tables and keys are the nodes of ``/cats-forwarder-config:forwarder``:
``forwarder-id`` (cats-t:forwarder-id), ``role`` (``ingress``, ``egress`` or both),
``state-dir``, ``[server]`` (``address``, ``netconf-port``, ``restconf-port``: the servers the
C-PS edits the steering configuration on), ``[data-plane]`` (``listen`` ADDR:PORT,
``threads``, ``connect-timeout-ms``, ``read-timeout-ms``), ``[[egress]]`` (tunnels:
``forwarder-id`` and the data-plane ``address`` of an egress forwarder), ``[[default-route]]``
(``cs-id`` and ``address``: where fallback level 3 sends the service's traffic) and
``[[users]]`` (``name``, ``password`` or ``password-hash``: the C-PS and operators). libyang
validates the file against the module (agents.common.config.load_modelled), every refusal
naming the file, the data path and the reason; the defaults are the module's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from agents.common.config import ConfigError, Table, load_modelled
from agents.common.logins import Login, logins_of
from agents.forwarder.values import Locator, locator
from controller.model import Schema
from controller.types import Json

MODULE = "cats-forwarder-config"
TOP = f"{MODULE}:forwarder"
DEFAULT_STATE_DIR = Path("forwarder-state")

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
    """The client-facing HTTP listener and the forwarding connection pools (timeouts in s,
    read from the file's milliseconds)."""

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


def _locator(value: str) -> Locator:
    """A validated cats-t:ip-port-locator."""
    found = locator(value)
    assert found is not None, value  # the module's pattern
    return found


def _pairs(entries: list[Json], key: str) -> dict[str, Locator]:
    return {str(entry[key]): _locator(entry["address"]) for entry in entries}


def parse_config(document: Json, base: Path) -> ForwarderConfig:
    """The configuration of one validated ``forwarder`` container (defaults filled in);
    ``base`` resolves a relative state-dir."""
    server, plane = document["server"], document["data-plane"]
    host, _, port = plane["listen"].rpartition(":")
    state_dir = document.get("state-dir")
    return ForwarderConfig(
        document.get("forwarder-id"),
        frozenset(Role(role) for role in document["role"]),
        base / state_dir if state_dir else DEFAULT_STATE_DIR,
        ServerConfig(server["address"], server["netconf-port"], server["restconf-port"]),
        DataPlane(
            host.strip("[]"),
            int(port),
            plane["threads"],
            plane["connect-timeout-ms"] / 1000,
            plane["read-timeout-ms"] / 1000,
        ),
        _pairs(document.get("egress", []), "forwarder-id"),
        _pairs(document.get("default-route", []), "cs-id"),
        logins_of(document.get("users", [])),
    )


def load_config(path: Path) -> ForwarderConfig:
    """Read and validate a ``.toml`` or ``.json`` file; raises :class:`ConfigError`."""
    with Schema(modules=(MODULE,)) as schema:
        document = load_modelled(path, schema, TOP)
    return parse_config(document, path.parent)


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
