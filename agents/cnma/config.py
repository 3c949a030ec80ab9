"""The C-NMA configuration file (TOML or JSON), validated strictly on load.

Top-level keys: ``name`` (the C-NMA's name in MSG-7, default the user name), ``[cps]``
(RESTCONF root, credentials), ``[reporting]`` (intervals, units, delta thresholds of
service-metrics-op 8), ``[paths]`` (path choice and aggregation rules), ``[topology]`` (nodes,
links, endpoints, candidates) and ``[[probes]]`` (active measurement). The topology tables are
read by :mod:`agents.cnma.topology_config`. Every refusal names the file and the dotted key.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from pathlib import Path

from agents.cnma.paths import AdminGroupRule, JitterRule, PathMetric, PathPolicy
from agents.cnma.probe import Probe
from agents.cnma.topology import Topology
from agents.cnma.topology_config import read_probes, read_topology
from agents.common.config import ConfigError, Table, load_document
from agents.common.cps import CpsSettings, parse_cps_table
from controller.selection.units import Micros

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


def _thresholds(table: Table) -> Thresholds:
    table.allow("delay", "delay-relative", "jitter", "bandwidth-relative", "loss")
    return Thresholds(
        table.millis("delay", Micros(0)),
        table.decimal("delay-relative", Decimal(0)),
        table.millis("jitter", Micros(0)),
        table.decimal("bandwidth-relative", Decimal(0)),
        table.integer("loss", 0, maximum=1_000_000),
    )


def _reporting(table: Table) -> Reporting:
    table.allow("interval", "heartbeat", "delay-unit", "thresholds", "forwarding-view")
    reporting = Reporting(
        table.seconds("interval", 5.0),
        table.seconds("heartbeat", 60.0),
        table.choice("delay-unit", DelayUnit, DelayUnit.MS),
        _thresholds(table.table("thresholds")),
        forwarding_view=table.boolean("forwarding-view", default=False),
    )
    if reporting.heartbeat < reporting.interval:
        raise table.error("heartbeat", "the heartbeat must not be shorter than the interval")
    return reporting


def _policy(table: Table) -> PathPolicy:
    table.allow("metric", "jitter", "admin-group")
    return PathPolicy(
        table.choice("metric", PathMetric, PathMetric.IGP),
        table.choice("jitter", JitterRule, JitterRule.SUM),
        table.choice("admin-group", AdminGroupRule, AdminGroupRule.ANY),
    )


def parse_config(document: Table, base: Path) -> CnmaConfig:
    """A configuration from its top-level table; ``base`` resolves relative file names."""
    document.allow("name", "cps", "reporting", "paths", "topology", "probes")
    topology = read_topology(document.table("topology", required=True))
    return CnmaConfig(
        topology,
        document.text("name", None),
        parse_cps_table(document.table("cps"), base),
        _reporting(document.table("reporting")),
        _policy(document.table("paths")),
        read_probes(document.tables("probes"), topology),
    )


def load_config(path: Path) -> CnmaConfig:
    """Read and validate a configuration file; :class:`ConfigError` names what is wrong."""
    table = Table(load_document(path), str(path))
    return parse_config(table, path.parent)


def with_overrides(
    config: CnmaConfig,
    *,
    url: str | None = None,
    username: str | None = None,
    password: str | None = None,
    heartbeat: float | None = None,
) -> CnmaConfig:
    """Command-line flags win over the file."""
    cps = replace(
        config.cps,
        url=(url or config.cps.url).rstrip("/"),
        username=username or config.cps.username,
        password=password or config.cps.password,
    )
    reporting = config.reporting
    if heartbeat is not None:
        if not heartbeat >= reporting.interval > 0:
            message = f"the heartbeat must be at least the interval ({reporting.interval} s)"
            raise ConfigError.at("--heartbeat", message)
        reporting = replace(reporting, heartbeat=heartbeat)
    return replace(config, cps=cps, reporting=reporting)
