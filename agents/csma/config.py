"""The C-SMA configuration file (TOML or JSON), validated strictly on load.

Top-level keys: ``name`` (the C-SMA's source id, default ``csma-SITE``), ``site`` (the service
site, sent as report-service-metrics ``site``), ``state-dir``, ``[server]`` (its own RESTCONF
and NETCONF listeners), ``[cps]`` (the C-PS's RESTCONF root and the C-SMA's credentials there),
``[reporting]`` (interval, heartbeat, aggregation, delta thresholds of service-metrics-op 8,
SCI expiry, the Computing Time estimates of services not measured yet), ``[[users]]`` (who may
call the C-SMA: SCIs, the C-PS, operators), ``[reservations]`` (validity window, per-session
rate limit) and ``[[instances]]`` with their ``[[instances.state]]`` seed of the state view
(:mod:`agents.csma.config_state`). Every refusal names the file and the dotted key.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from pathlib import Path

from agents.common.config import ConfigError, Table, load_document
from agents.common.cps import CpsSettings, parse_cps
from agents.csma.config_state import (
    InstanceConfig,
    Role,
    UserConfig,
    read_instances,
    read_reservations,
    read_users,
)
from agents.csma.reservations import Policy
from agents.csma.thresholds import Thresholds
from agents.csma.values import Estimates
from controller.types import CsId

DEFAULT_STATE_DIR = Path("csma-state")
_MAX_PORT = 65535
_MAX_MS = Decimal("9223372036854775.807")  # decimal64, fraction-digits 3

__all__ = ["ConfigError", "CsmaConfig", "InstanceConfig", "Role", "UserConfig", "load_config"]


class Aggregation(StrEnum):
    """One entry per SCI, or one aggregated entry per service of the site (section 8)."""

    PER_SCI = "per-sci"
    PER_SITE = "per-site"


@dataclass(frozen=True, slots=True)
class Advertising:
    """MSG-4 (agents.csma.capability): how often the C-SMA advertises its instances' capability
    and load to the C-PS (seconds; 0: never). The freshness bound it states is three intervals,
    so one lost advertisement does not age the view out."""

    interval: float = 30.0


@dataclass(frozen=True, slots=True)
class Reporting:
    """When and how the C-SMA reports to the C-PS (service-metrics-op 6.1, 8)."""

    interval: float = 1.0  # seconds between looks at the cache
    heartbeat: float = 60.0  # seconds between heartbeats (or full reports)
    heartbeat_full: bool = True  # each heartbeat refreshes the current values (full report)
    aggregation: Aggregation = Aggregation.PER_SCI
    site_csci_id: str | None = None  # the aggregated entry's CSCI-ID (default: the site)
    thresholds: Thresholds = field(default_factory=Thresholds)
    sci_expiry: float | None = None  # seconds; default: each report's freshness bound
    forget_after: float = 60.0  # seconds a withdrawn SCI stays advertised with GAS 0
    min_interval: float = 0.1  # seconds at least between two reports (changes coalesce)
    estimates: Estimates = field(default_factory=Estimates)  # ms, while nothing is measured


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """The C-SMA's own model-driven server (report-sci-metrics, query/reserve/release-state)."""

    address: str = "127.0.0.1"
    restconf_port: int = 8180
    netconf_port: int = 8831  # 0: no NETCONF


@dataclass(frozen=True, slots=True)
class CsmaConfig:
    """The whole configuration."""

    site: str
    name: str
    state_dir: Path = DEFAULT_STATE_DIR
    server: ServerConfig = field(default_factory=ServerConfig)
    cps: CpsSettings = field(default_factory=CpsSettings)
    reporting: Reporting = field(default_factory=Reporting)
    users: tuple[UserConfig, ...] = ()
    instances: tuple[InstanceConfig, ...] = ()
    reservations: Policy = field(default_factory=Policy)
    advertising: Advertising = field(default_factory=Advertising)

    @property
    def site_csci_id(self) -> str:
        """The CSCI-ID of the site's aggregated entries."""
        return self.reporting.site_csci_id or self.site


def _port(table: Table, name: str, default: int) -> int:
    port: int = table.integer(name, default, maximum=_MAX_PORT)
    return port


def _server(table: Table) -> ServerConfig:
    table.allow("address", "restconf-port", "netconf-port")
    return ServerConfig(
        table.text("address", "127.0.0.1"),
        _port(table, "restconf-port", 8180),
        _port(table, "netconf-port", 8831),
    )


def _thresholds(table: Table) -> Thresholds:
    table.allow("gas-absolute", "gas-relative", "computing-time-relative", "health-change")
    return Thresholds(
        table.integer("gas-absolute", 50),
        table.decimal("gas-relative", Decimal(10)),
        table.decimal("computing-time-relative", Decimal(20)),
        table.boolean("health-change", True),  # noqa: FBT003 - the key's default
    )


def _estimate(table: Table, name: str) -> Decimal | None:
    """A Computing Time estimate in ms: positive (0 ms would win every selection), a
    cats-t:milliseconds (decimal64, three fraction digits)."""
    value: Decimal | None = table.decimal(name, None)
    if value is not None and (
        value <= 0 or value > _MAX_MS or value != value.quantize(Decimal("0.001"))
    ):
        raise table.error(name, f"expected a positive number of ms (3 decimals), got {value}")
    return value


def _estimates(table: Table) -> Estimates:
    per_service = table.table("computing-time-estimates")
    return Estimates(
        _estimate(table, "computing-time-estimate"),
        tuple(
            (CsId(name), value)
            for name in sorted(per_service.values)
            if (value := _estimate(per_service, name)) is not None
        ),
    )


def _reporting(table: Table) -> Reporting:
    table.allow(
        "interval",
        "heartbeat",
        "heartbeat-kind",
        "aggregation",
        "site-csci-id",
        "thresholds",
        "sci-expiry",
        "forget-after",
        "min-interval",
        "computing-time-estimate",
        "computing-time-estimates",
    )
    kind = table.text("heartbeat-kind", "full")
    if kind not in {"heartbeat", "full"}:
        raise table.error("heartbeat-kind", f"expected heartbeat or full, got {kind!r}")
    return Reporting(
        table.seconds("interval", 1.0),
        table.seconds("heartbeat", 60.0),
        kind == "full",
        table.choice("aggregation", Aggregation, Aggregation.PER_SCI),
        table.text("site-csci-id", None),
        _thresholds(table.table("thresholds")),
        table.seconds("sci-expiry", None),
        table.seconds("forget-after", 60.0),
        float(table.decimal("min-interval", Decimal("0.1"))),
        _estimates(table),
    )


def parse_config(document: Table, base: Path, now: float) -> CsmaConfig:
    """The configuration of one parsed document; ``base`` resolves relative file names and
    seeded state ages count back from ``now`` (Unix seconds)."""
    document.allow(
        "name",
        "site",
        "state-dir",
        "server",
        "cps",
        "reporting",
        "advertising",
        "users",
        "reservations",
        "instances",
    )
    site: str = document.text("site")
    instances = read_instances(document.tables("instances"), now)
    state_dir = document.text("state-dir", None)
    return CsmaConfig(
        site,
        document.text("name", f"csma-{site}"),
        base / state_dir if state_dir else DEFAULT_STATE_DIR,
        _server(document.table("server")),
        parse_cps(document.table("cps"), base, netconf=False),
        _reporting(document.table("reporting")),
        read_users(document.tables("users"), base),
        instances,
        read_reservations(document.table("reservations")),
        _advertising(document.table("advertising")),
    )


def _advertising(table: Table) -> Advertising:
    table.allow("interval")
    interval = float(table.decimal("interval", Decimal(30)))
    if interval < 0:
        raise table.error("interval", "expected seconds, 0 or more (0: never)")
    return Advertising(interval)


def load_config(path: Path) -> CsmaConfig:
    """Read and validate a ``.toml`` or ``.json`` file; raises :class:`ConfigError`."""
    return parse_config(Table(load_document(path), str(path)), path.parent, time.time())


def with_overrides(  # noqa: PLR0913 - one keyword per command-line flag
    config: CsmaConfig,
    *,
    state_dir: Path | None = None,
    url: str | None = None,
    username: str | None = None,
    password: str | None = None,
    heartbeat: float | None = None,
    server: ServerConfig | None = None,
) -> CsmaConfig:
    """The configuration with the command-line flags applied."""
    cps = config.cps
    if url is not None:
        cps = replace(cps, url=url.rstrip("/"))
    if username is not None:
        cps = replace(cps, username=username)
    if password is not None:
        cps = replace(cps, password=password)
    reporting = config.reporting
    if heartbeat is not None:
        if heartbeat <= 0:
            raise ConfigError.at("--heartbeat", "expected a positive number of seconds")
        reporting = replace(reporting, heartbeat=heartbeat)
    return replace(
        config,
        state_dir=state_dir or config.state_dir,
        cps=cps,
        reporting=reporting,
        server=server or config.server,
    )
