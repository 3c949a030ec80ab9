"""The configuration of ietf-cats-agent-selection in running: tiers, context, candidates.

:class:`AgentConfig` is parsed once per revision of running (:class:`RunningAgentConfig`),
with the C-SMA of each candidate and the credentials the C-PS logs in with there
(``c-sma/username``, ``password``; :mod:`controller.agent_selection.csmas` uses them);
:func:`context` turns a ``selection-context`` (the configured one with the descriptor's
overrides merged over it, 6.4) into the core's :class:`SelectionContext` and the C-PS's own
bounds (:class:`Bounds`: rate limits, retention, handoff timeout; sections 13, 14).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.agent_selection.values import MODULE, ident, integer, number, seconds
from controller.datastore.api import ServerCore
from controller.selection.mapping import (
    Band,
    BudgetPacing,
    Lexicographic,
    SelectionContext,
    Stability,
    TierCatalogue,
    Weighted,
)
from controller.selection.mapping.vocabulary import Dimension, ThresholdAction
from controller.service_metrics.running import ParsedRunning, container
from controller.southbound import Credentials, Target
from controller.types import CsciId, CsId, Json, RegionId, TenantId, TierName

_DIMENSIONS = {d.value: d for d in Dimension}


@dataclass(frozen=True, slots=True)
class Bounds:
    """What the C-PS bounds per session (13, 14) and how long it keeps records (M39)."""

    max_decision_rate: int | None = None
    max_state_query_rate: int | None = None
    max_reservation_rate: int | None = None
    retention_after_close: float = 3600.0
    max_records: int | None = None
    handoff_timeout: float = 30.0
    max_advertisement_rate: int | None = None  # per advertiser and second (14)


@dataclass(frozen=True, slots=True)
class CandidateConfig:
    """One configured candidate: where it is, who may use it, which C-SMA speaks for it."""

    csci_id: CsciId
    cs_id: CsId
    enabled: bool = True
    region: RegionId | None = None
    permitted_tenants: frozenset[TenantId] = frozenset()
    trusted: bool = False
    c_sma: Target | None = None
    credentials: Credentials | None = None  # how the C-PS logs in at c_sma


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """The agent-selection configuration in force."""

    tiers: TierCatalogue = field(default_factory=TierCatalogue)
    context: Json = field(default_factory=dict)
    candidates: Mapping[CsciId, CandidateConfig] = field(default_factory=dict)
    logins: Mapping[Target, Credentials] = field(default_factory=dict)

    def for_service(self, cs_id: CsId) -> list[CandidateConfig]:
        """The candidates of a service, in configuration order."""
        return [c for c in self.candidates.values() if c.cs_id == cs_id]


def _stability(doc: Mapping[str, Any]) -> Stability:
    return Stability(
        seconds(doc.get("min-interval")) or 0.0,
        number(doc.get("min-improvement")) or 0.0,
        seconds(doc.get("sustain-period")) or 0.0,
    )


def _combination(doc: Mapping[str, Any]) -> Weighted | Lexicographic:
    if "order" in doc:
        return Lexicographic(tuple(Dimension(ident(d)) for d in doc["order"]))
    weights = doc.get("weight")
    if not weights:
        return Weighted()
    return Weighted(tuple((Dimension(ident(w["dimension"])), float(w["value"])) for w in weights))


def context(doc: Mapping[str, Any]) -> tuple[SelectionContext, Bounds]:
    """The core's selection context and the C-PS bounds of a ``selection-context``."""
    pacing = doc.get("budget-pacing", {})
    limits = doc.get("rate-limits", {})
    retention = doc.get("decision-record-retention", {})
    bands = {
        _DIMENSIONS.get(ident(b["quantity"])): Band(
            float(b["width"]), number(b.get("origin")) or 0.0
        )
        for b in doc.get("banding", {}).get("band", ())
    }
    factor = number(doc.get("tail-detection-factor"))
    built = SelectionContext(
        _stability(doc.get("stability", {})),
        bands,
        integer(doc.get("look-ahead-horizon")) or 1,
        BudgetPacing(
            bool(pacing.get("uneven-spending", False)),
            number(pacing.get("reserve-fraction")) or 0.0,
            tuple(
                (float(t["fraction"]), ThresholdAction(str(t["action"])))
                for t in pacing.get("threshold", ())
            ),
        ),
        _combination(doc.get("combination", {})),
        factor if factor is not None else TAIL_DETECTION_FACTOR,
        _limit(limits, "max-decision-rate"),
    )
    after = integer(retention.get("after-close"))
    timeout = seconds(doc.get("handoff-timeout"))
    bounds = Bounds(
        _limit(limits, "max-decision-rate"),
        _limit(limits, "max-state-query-rate"),
        _limit(limits, "max-reservation-rate"),
        3600.0 if after is None else float(after),
        integer(retention.get("max-records")),
        HANDOFF_TIMEOUT_S if timeout is None else timeout,
        _limit(limits, "max-advertisement-rate"),
    )
    return built, bounds


#: The defaults the module gives the bounds (the ``refine`` of ``agent-selection/
#: selection-context``): a bound left unconfigured is in force at that value, as a reader of
#: the YANG expects; a descriptor's selection-context may set its own.
LIMIT_DEFAULTS = {
    "max-decision-rate": 60,
    "max-state-query-rate": 100,
    "max-advertisement-rate": 10,
    "max-reservation-rate": 6,
}
HANDOFF_TIMEOUT_S = 60.0
TAIL_DETECTION_FACTOR = 3.0  # the module's default (M35)


def _limit(limits: Mapping[str, Any], name: str) -> int | None:
    value = integer(limits.get(name))
    return LIMIT_DEFAULTS[name] if value is None else value


def overridden(configured: Json, override: Mapping[str, Any] | None) -> Json:
    """The configured context with the descriptor's per-session overrides merged over it."""
    if not override:
        return configured
    merged = dict(configured)
    for key, value in override.items():
        old = merged.get(key)
        merged[key] = (
            {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return merged


def _as_is(secret: str) -> str:
    return secret


def _candidate(doc: Mapping[str, Any], reveal: Callable[[str], str]) -> CandidateConfig:
    sma = doc.get("c-sma", {})
    target = None
    credentials = None
    if "address" in sma:  # the schema requires a username with it
        name = str(sma.get("name", sma["address"]))
        target = Target(name, str(sma["address"]), int(sma.get("port", 830)))
        credentials = Credentials.of(sma, reveal)
    region = doc.get("region")
    tenancy = doc.get("tenancy", {})
    return CandidateConfig(
        CsciId(str(doc["csci-id"])),
        CsId(str(doc["cs-id"])),
        bool(doc.get("enabled", True)),
        None if region is None else RegionId(str(region)),
        frozenset(TenantId(str(t)) for t in tenancy.get("permitted-tenant", ())),
        bool(doc.get("trusted", False)),
        target,
        credentials,
    )


def parse(doc: Mapping[str, Any], reveal: Callable[[str], str] = _as_is) -> AgentConfig:
    """The ``agent-selection`` container of running (``reveal`` decrypts the stored C-SMA
    passwords, ``ServerCore.reveal``)."""
    tiers = {
        TierName(str(t["name"])): int(t["rank"])
        for t in doc.get("capability-tiers", {}).get("capability-tier", ())
    }
    candidates = [_candidate(c, reveal) for c in doc.get("candidates", {}).get("candidate", ())]
    logins: dict[Target, Credentials] = {}
    for c in candidates:  # the first candidate naming a C-SMA gives its credentials
        if c.c_sma is not None and c.credentials is not None:
            logins.setdefault(c.c_sma, c.credentials)
    return AgentConfig(
        TierCatalogue(tiers),
        dict(doc.get("selection-context", {})),
        {c.csci_id: c for c in candidates},
        logins,
    )


ConfigSource = Callable[[], AgentConfig]


class RunningAgentConfig(ParsedRunning[AgentConfig]):
    """Reads ``agent-selection`` from running, parsed once per revision of running."""

    def read(self, core: ServerCore) -> AgentConfig:
        """The ``agent-selection`` container of running, parsed."""
        return parse(container(core, MODULE, "agent-selection"), core.reveal)
