"""The C-SMA configuration file (TOML or JSON): the ``cats-csma-config`` module.

libyang validates the file against the module (agents.common.config.load_modelled), every
refusal naming the file, the data path and the reason; the defaults are the module's and every
duration is in milliseconds (``-ms`` keys).

Top-level keys: ``name`` (the C-SMA's source id, default ``csma-SITE``), ``site`` (the service
site, sent as report-service-metrics ``site``), ``state-dir``, ``[server]`` (its own RESTCONF
and NETCONF listeners), ``[cps]`` (the C-PS's RESTCONF root and the C-SMA's credentials there),
``[reporting]`` (interval, heartbeat, aggregation, delta thresholds of service-metrics-op 8,
SCI expiry, the Computing Time estimates of services not measured yet), ``[[users]]`` (who may
call the C-SMA: SCIs, the C-PS, operators), ``[reservations]`` (validity window, per-session
rate limit) and ``[[instances]]`` with their ``[[instances.state]]`` seed of the state view
(:mod:`agents.csma.config_state`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from pathlib import Path

from agents.common.config import ConfigError, load_modelled
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
from controller.model import Schema
from controller.types import CsId, Json

MODULE = "cats-csma-config"
TOP = f"{MODULE}:csma"
DEFAULT_STATE_DIR = Path("csma-state")

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

    interval: float = 30.0  # seconds (the file's interval-ms)


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


def _ms(value: int | None) -> float | None:
    return None if value is None else value / 1000


def _estimates(reporting: Json) -> Estimates:
    default = reporting.get("computing-time-estimate")
    return Estimates(
        None if default is None else Decimal(default),
        tuple(
            (CsId(str(item["cs-id"])), Decimal(item["estimate"]))
            for item in sorted(
                reporting.get("computing-time-estimates", ()), key=lambda i: str(i["cs-id"])
            )
        ),
    )


def _reporting(doc: Json) -> Reporting:
    thresholds = doc["thresholds"]
    return Reporting(
        doc["interval-ms"] / 1000,
        doc["heartbeat-ms"] / 1000,
        doc["heartbeat-kind"] == "full",
        Aggregation(doc["aggregation"]),
        None if "site-csci-id" not in doc else str(doc["site-csci-id"]),
        Thresholds(
            thresholds["gas-absolute"],
            Decimal(thresholds["gas-relative"]),
            Decimal(thresholds["computing-time-relative"]),
            thresholds["health-change"],
        ),
        _ms(doc.get("sci-expiry-ms")),
        doc["forget-after-ms"] / 1000,
        doc["min-interval-ms"] / 1000,
        _estimates(doc),
    )


def parse_config(document: Json, base: Path, now: float) -> CsmaConfig:
    """The configuration of one validated ``csma`` container (defaults filled in); ``base``
    resolves relative file names and seeded state ages count back from ``now`` (Unix s)."""
    site: str = document["site"]
    server = document["server"]
    state_dir = document.get("state-dir")
    return CsmaConfig(
        site,
        document.get("name", f"csma-{site}"),
        base / state_dir if state_dir else DEFAULT_STATE_DIR,
        ServerConfig(server["address"], server["restconf-port"], server["netconf-port"]),
        parse_cps(document["cps"], base, f"/{TOP}/cps"),
        _reporting(document["reporting"]),
        read_users(document.get("users", [])),
        read_instances(document.get("instances", []), now),
        read_reservations(document["reservations"]),
        Advertising(document["advertising"]["interval-ms"] / 1000),
    )


def load_config(path: Path) -> CsmaConfig:
    """Read and validate a ``.toml`` or ``.json`` file; raises :class:`ConfigError`."""
    with Schema(modules=(MODULE,)) as schema:
        document = load_modelled(path, schema, TOP)
    return parse_config(document, path.parent, time.time())


def with_overrides(  # noqa: PLR0913 - one keyword per command-line flag
    config: CsmaConfig,
    *,
    state_dir: Path | None = None,
    url: str | None = None,
    username: str | None = None,
    password: str | None = None,
    heartbeat_ms: int | None = None,
    server: ServerConfig | None = None,
) -> CsmaConfig:
    """The configuration with the command-line flags applied; ``heartbeat_ms`` in milliseconds,
    as ``reporting/heartbeat-ms`` (docs/yang-conventions.md, Units)."""
    cps = config.cps
    if url is not None:
        cps = replace(cps, url=url.rstrip("/"))
    if username is not None:
        cps = replace(cps, username=username)
    if password is not None:
        cps = replace(cps, password=password)
    reporting = config.reporting
    if heartbeat_ms is not None:
        if heartbeat_ms <= 0:
            raise ConfigError.at("--heartbeat-ms", "expected a positive number of milliseconds")
        reporting = replace(reporting, heartbeat=heartbeat_ms / 1000)
    return replace(
        config,
        state_dir=state_dir or config.state_dir,
        cps=cps,
        reporting=reporting,
        server=server or config.server,
    )
