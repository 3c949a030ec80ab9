"""The configuration of ietf-cats-agent-selection in running: tiers, context, candidates.

:class:`AgentConfig` is parsed once per revision of running (:class:`RunningAgentConfig`),
with the C-SMA of each candidate and the credentials the C-PS logs in with there
(``c-sma/username``, ``password``; :mod:`controller.agent_selection.csmas` uses them);
:func:`context` turns a ``selection-context`` (the configured one with the descriptor's
overrides merged over it, 6.4) into the core's :class:`SelectionContext` and the C-PS's own
bounds (:class:`Bounds`: rate limits, retention, handoff timeout; sections 13, 14).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from controller.agent_selection.values import MODULE, ident, integer, number, seconds
from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    ReadRequest,
    ServerCore,
    WithDefaults,
)
from controller.model import Schema
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
from controller.service_metrics.running import ParsedRunning
from controller.southbound import Credentials, Target
from controller.types import CsciId, CsId, DataPath, Json, RegionId, TenantId, TierName

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
    _services: Mapping[CsId, tuple[CandidateConfig, ...]] = field(
        init=False, repr=False, compare=False
    )
    #: The C-SMA of each candidate (None: no C-SMA configured), for every decision's effects.
    targets: Mapping[CsciId, Target | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Group the candidates by service, and name their C-SMAs, once (every decision
        asks for its service's)."""
        services: dict[CsId, list[CandidateConfig]] = {}
        for candidate in self.candidates.values():
            services.setdefault(candidate.cs_id, []).append(candidate)
        grouped = {cs_id: tuple(found) for cs_id, found in services.items()}
        object.__setattr__(self, "_services", grouped)
        targets = {c.csci_id: c.c_sma for c in self.candidates.values()}
        object.__setattr__(self, "targets", MappingProxyType(targets))

    def for_service(self, cs_id: CsId) -> tuple[CandidateConfig, ...]:
        """The candidates of a service, in configuration order."""
        return self._services.get(cs_id, ())


def _stability(doc: Mapping[str, Any]) -> Stability:
    return Stability(
        seconds(doc.get("min-interval")) or 0.0,
        number(doc.get("min-improvement")) or 0.0,
        seconds(doc.get("sustain-period")) or 0.0,
    )


_WEIGHTED = Weighted()  # the default rule, one value shared by every record that used it


def _combination(doc: Mapping[str, Any]) -> Weighted | Lexicographic:
    if "order" in doc:
        return Lexicographic(tuple(Dimension(ident(d)) for d in doc["order"]))
    weights = doc.get("weight")
    if not weights:
        return _WEIGHTED
    return Weighted(tuple((Dimension(ident(w["dimension"])), float(w["value"])) for w in weights))


#: What a leaf absent from a context means. The defaults are the module's (the refines of
#: ``agent-selection/selection-context``): running is read with them (report-all), so a
#: configured context always carries them and the code keeps no second copy. These apply
#: only to a context read without them (a bare test double): no bound, nothing kept.
NO_TAIL_FACTOR = float("inf")
NO_RETENTION = 0.0
NO_TIMEOUT = float("inf")


def context(doc: Mapping[str, Any]) -> tuple[SelectionContext, Bounds]:
    """The core's selection context and the C-PS bounds of a ``selection-context`` (the
    configured one, read with the module's defaults, with the descriptor's overrides)."""
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
        factor if factor is not None else NO_TAIL_FACTOR,
        _limit(limits, "max-decision-rate"),
    )
    after = integer(retention.get("after-close"))
    timeout = seconds(doc.get("handoff-timeout"))
    bounds = Bounds(
        _limit(limits, "max-decision-rate"),
        _limit(limits, "max-state-query-rate"),
        _limit(limits, "max-reservation-rate"),
        NO_RETENTION if after is None else float(after),
        integer(retention.get("max-records")),
        NO_TIMEOUT if timeout is None else timeout,
        _limit(limits, "max-advertisement-rate"),
    )
    return built, bounds


def _limit(limits: Mapping[str, Any], name: str) -> int | None:
    """A rate limit; None (unbounded) only when neither running nor the descriptor has one
    (running is read with its defaults, so the module's refine is in force there)."""
    return integer(limits.get(name))


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


def with_defaults(doc: Json, schema: Schema) -> Json:
    """An ``agent-selection`` container validated and completed with the module's defaults:
    what running gives a report-all read (for a configuration that does not come from one)."""
    document = json.dumps({f"{MODULE}:agent-selection": doc})
    found: Json = json.loads(schema.with_defaults(document)).get(f"{MODULE}:agent-selection", {})
    return found


ConfigSource = Callable[[], AgentConfig]


class RunningAgentConfig(ParsedRunning[AgentConfig]):
    """Reads ``agent-selection`` from running, parsed once per revision of running."""

    def read(self, core: ServerCore) -> AgentConfig:
        """The ``agent-selection`` container of running with the module's defaults (RFC 6243
        report-all: the refines of ``selection-context`` are the only defaults), parsed."""
        path = DataPath(f"/{MODULE}:agent-selection")
        request = ReadRequest(DatastoreName.RUNNING, path, with_defaults=WithDefaults.REPORT_ALL)
        document = core.read(request, SYSTEM).document
        loaded: Any = json.loads(document) if document else {}
        found = loaded.get(f"{MODULE}:agent-selection", {}) if isinstance(loaded, dict) else {}
        return parse(found if isinstance(found, dict) else {}, core.reveal)
