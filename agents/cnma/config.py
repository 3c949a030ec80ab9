"""The C-NMA configuration file (TOML or JSON): the ``cats-cnma-config`` module.

libyang validates the file against the module (agents.common.config.load_modelled), every
refusal naming the file, the data path and the reason; the defaults are the module's and every
duration is in milliseconds (``interval-ms``, ``heartbeat-ms``, ``timeout-ms``; delays and
jitter as before).

Top-level keys: ``name`` (the C-NMA's name in MSG-7, default the user name), ``[cps]``
(RESTCONF root, credentials), ``[reporting]`` (intervals, units, delta thresholds of
service-metrics-op 8), ``[paths]`` (path choice and aggregation rules), ``[topology]`` (nodes,
links, endpoints, candidates) and ``[[probes]]`` (active measurement). The topology tables are
read by :mod:`agents.cnma.topology_config`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from pathlib import Path

from agents.cnma.paths import AdminGroupRule, JitterRule, PathMetric, PathPolicy
from agents.cnma.probe import Probe
from agents.cnma.topology import Topology
from agents.cnma.topology_config import micros, read_probes, read_topology
from agents.common.config import ConfigError, load_modelled
from agents.common.cps import CpsSettings, parse_cps
from controller.model import Schema
from controller.selection.units import Micros
from controller.types import Json

MODULE = "cats-cnma-config"
TOP = f"{MODULE}:cnma"
ZERO = Micros(0)


class DelayUnit(StrEnum):
    """How report-network-metrics carries delay and jitter: ``delay`` or ``delay-us``."""

    MS = "ms"
    US = "us"


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Delta reporting: a path is reported only when a change exceeds these (6.1, 8).

    Delay and jitter changes count when they exceed ``absolute`` and ``relative`` percent of
    the reported value; any change of bandwidth beyond ``bandwidth_relative`` percent, of loss
    beyond ``loss_absolute`` ppm, or of a TE attribute or the hop list counts. All zero: every
    change is reported.
    """

    delay_absolute: Micros = ZERO
    delay_relative: Decimal = Decimal(0)
    jitter_absolute: Micros = ZERO
    bandwidth_relative: Decimal = Decimal(0)
    loss_absolute: int = 0


@dataclass(frozen=True, slots=True)
class Reporting:
    """When and how reports go (service-metrics-op 8: on change, and a full heartbeat)."""

    interval: float = 5.0  # seconds between recomputations (and probe rounds)
    heartbeat: float = 60.0  # seconds between full reports
    delay_unit: DelayUnit = DelayUnit.MS
    thresholds: Thresholds = field(default_factory=Thresholds)
    forwarding_view: bool = False  # also send advertise-forwarding-view (MSG-7)


@dataclass(frozen=True, slots=True)
class CnmaConfig:
    """The whole configuration."""

    topology: Topology
    name: str | None = None
    cps: CpsSettings = field(default_factory=CpsSettings)
    reporting: Reporting = field(default_factory=Reporting)
    policy: PathPolicy = field(default_factory=PathPolicy)
    probes: tuple[Probe, ...] = ()

    @property
    def source(self) -> str:
        """The C-NMA's name: ``name``, else the C-PS user name, else ``c-nma``."""
        return self.name or self.cps.username or "c-nma"


def _reporting(doc: Json) -> Reporting:
    thresholds = doc["thresholds"]
    return Reporting(
        doc["interval-ms"] / 1000,
        doc["heartbeat-ms"] / 1000,
        DelayUnit(doc["delay-unit"]),
        Thresholds(
            micros(thresholds["delay"]),
            Decimal(thresholds["delay-relative"]),
            micros(thresholds["jitter"]),
            Decimal(thresholds["bandwidth-relative"]),
            thresholds["loss"],
        ),
        forwarding_view=doc["forwarding-view"],
    )


def parse_config(document: Json, base: Path, file: str = "") -> CnmaConfig:
    """A validated ``cnma`` container (defaults filled in); ``base`` resolves relative file
    names and ``file`` is named in a refusal."""
    topology = read_topology(document["topology"], f"/{TOP}/topology", file)
    paths = document["paths"]
    return CnmaConfig(
        topology,
        document.get("name"),
        parse_cps(document["cps"], base, f"/{TOP}/cps"),
        _reporting(document["reporting"]),
        PathPolicy(
            PathMetric(paths["metric"]),
            JitterRule(paths["jitter"]),
            AdminGroupRule(paths["admin-group"]),
        ),
        read_probes(document.get("probes", [])),
    )


def load_config(path: Path) -> CnmaConfig:
    """Read and validate a configuration file; :class:`ConfigError` names what is wrong."""
    with Schema(modules=(MODULE,)) as schema:
        document = load_modelled(path, schema, TOP)
    return parse_config(document, path.parent, str(path))


def with_overrides(
    config: CnmaConfig,
    *,
    url: str | None = None,
    username: str | None = None,
    password: str | None = None,
    heartbeat_ms: int | None = None,
) -> CnmaConfig:
    """Command-line flags win over the file; ``heartbeat_ms`` in milliseconds, as
    ``reporting/heartbeat-ms`` (docs/yang-conventions.md, Units)."""
    cps = replace(
        config.cps,
        url=(url or config.cps.url).rstrip("/"),
        username=username or config.cps.username,
        password=password or config.cps.password,
    )
    reporting = config.reporting
    if heartbeat_ms is not None:
        interval_ms = round(reporting.interval * 1000)
        if not heartbeat_ms >= interval_ms > 0:
            message = f"the heartbeat must be at least reporting/interval-ms ({interval_ms})"
            raise ConfigError.at("--heartbeat-ms", message)
        reporting = replace(reporting, heartbeat=heartbeat_ms / 1000)
    return replace(config, cps=cps, reporting=reporting)
