"""The C-PS configuration of ietf-cats-service-metrics as selection-core values.

``selection-policy``, ``update-control`` and ``csci-attachments`` arrive as validated RFC 7951
JSON read from running; these pure functions turn them into a :class:`Requirement`, the
:class:`SelectionSettings` and the ingest settings (service-metrics-op 6.2.3-6.2.5, 8). An
absent leaf takes the YANG default; the schema has already checked every value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from controller.selection.dispatch import DispatchAccounting
from controller.selection.joint import (
    Bounds,
    FallbackPolicy,
    GeoFence,
    HardConstraints,
    LoadDistribution,
    LoadMethod,
    Metric,
    Objective,
    OverrideMode,
    PolicyOverride,
    ProviderPreference,
    RelaxationAmount,
    RelaxationStep,
    Requirement,
    SelectionSettings,
    SoftConstraint,
    TieBreak,
    Weights,
    from_ms,
)
from controller.selection.joint.requirement import DEFAULT_RELAXATION
from controller.types import Json

MODULE = "ietf-cats-service-metrics"

#: Metrics whose values the core keeps in microseconds; YANG gives them in milliseconds.
TIME_METRICS = frozenset(
    {Metric.COMPUTING_TIME, Metric.NETWORK_DELAY, Metric.JITTER, Metric.TOTAL_SERVICE_TIME}
)


def identity(value: str) -> str:
    """The name of an identityref value, without its module prefix (RFC 7951 6.8)."""
    return value.rpartition(":")[2]


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> Json:
    """Deep merge of two requirement documents: containers merge, leaves and lists replace."""
    merged: Json = dict(base)
    for name, value in override.items():
        old = merged.get(name)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[name] = merge(old, value)
        else:
            merged[name] = value
    return merged


def _in_core_unit(metric: Metric, value: str | float) -> float:
    scale = 1000 if metric in TIME_METRICS else 1
    return float(Decimal(str(value)) * scale)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _ms(value: Any) -> Any:
    return None if value is None else from_ms(str(value))


def hard_constraints(doc: Mapping[str, Any]) -> HardConstraints:
    """The ``hard-constraints`` container (6.2.3 Steps 2 and 5, 6.2.4)."""
    return HardConstraints(
        min_security_level=_int(doc.get("min-security-level")),
        require_validated_security_level=bool(doc.get("require-validated-security-level")),
        min_reputation=_int(doc.get("min-reputation")),
        max_price=_int(doc.get("max-price")),
        required_gas=int(doc.get("required-gas", 1)),
        min_bandwidth=_int(doc.get("min-bandwidth")),
        max_jitter=_ms(doc.get("max-jitter")),
        max_loss_rate=_int(doc.get("max-loss-rate")),
        max_latency=_ms(doc.get("max-latency")),
        accept_degraded=bool(doc.get("accept-degraded", True)),
    )


def _weights(doc: Mapping[str, Any]) -> Weights:
    values = {name.replace("-", "_"): float(Decimal(str(v))) for name, v in doc.items()}
    return Weights(**values)


def _overrides(doc: Mapping[str, Any]) -> PolicyOverride:
    geo = doc.get("geo-fence", {})
    providers = doc.get("provider-preference", {})
    load = doc.get("load-distribution")
    return PolicyOverride(
        geo_fence=GeoFence(
            frozenset(geo.get("permitted-region", ())), OverrideMode(geo.get("mode", "prefer"))
        ),
        provider_preference=ProviderPreference(
            frozenset(providers.get("preferred-provider", ())),
            OverrideMode(providers.get("mode", "prefer")),
        ),
        avoid_maintenance=bool(doc.get("avoid-maintenance", True)),
        load_distribution=None
        if load is None
        else LoadDistribution(
            from_ms(str(load["tst-tolerance"])), LoadMethod(load.get("method", "round-robin"))
        ),
    )


def requirement(doc: Mapping[str, Any]) -> Requirement:
    """The ``service-requirement`` grouping as the core's :class:`Requirement` (6.2.3, 6.2.4)."""
    weighted = doc.get("weighted-objective", {})
    soft = tuple(
        SoftConstraint(
            metric,
            _in_core_unit(metric, item["threshold"]),
            float(Decimal(str(item["penalty"]))),
        )
        for item in doc.get("soft-constraint", ())
        for metric in (Metric(identity(item["metric"])),)
    )
    bounds = {
        metric: Bounds(_in_core_unit(metric, item["min"]), _in_core_unit(metric, item["max"]))
        for item in weighted.get("normalization", ())
        for metric in (Metric(identity(item["metric"])),)
    }
    return Requirement(
        hard=hard_constraints(doc.get("hard-constraints", {})),
        objectives=tuple(Objective(identity(v)) for v in doc.get("objective", ())),
        soft=soft,
        weights=_weights(weighted.get("weights", {})),
        normalization=bounds,
        tie_breaks=tuple(TieBreak(identity(v)) for v in doc.get("tie-break", ())),
        hierarchical=bool(doc.get("hierarchical-selection", False)),
        session_affinity=bool(doc.get("session-affinity", False)),
        overrides=_overrides(doc.get("policy-override", {})),
    )


def _relaxation(item: Mapping[str, Any]) -> RelaxationAmount:
    amount = item.get("percent", item.get("points"))
    step = RelaxationStep(identity(item["step"]))
    return RelaxationAmount(step, None if amount is None else Decimal(str(amount)))


def fallback_policy(doc: Mapping[str, Any]) -> FallbackPolicy:
    """The ``selection-policy/fallback`` container (6.2.5)."""
    steps = tuple(_relaxation(item) for item in doc.get("relaxation-step", ()))
    return FallbackPolicy(
        relax_constraints=bool(doc.get("relax-constraints", True)),
        relaxation=steps or DEFAULT_RELAXATION,
        max_rounds=int(doc.get("max-relaxation-rounds", 1)),
        network_only=bool(doc.get("network-only", True)),
        default_route=bool(doc.get("default-route", True)),
    )


@dataclass(frozen=True, slots=True)
class Attachment:
    """One ``csci-attachments/attachment``: where a CSCI-ID attaches and who may report it."""

    egress: str | None = None
    site: str | None = None
    region: str | None = None
    provider: str | None = None
    under_maintenance: bool = False
    security_level_validated: bool = False
    authorized_senders: frozenset[str] = frozenset()
    gas_capacity: int | None = None  # GAS above it is capped and flagged (9, GAS Inflation)


@dataclass(frozen=True, slots=True)
class DeltaThreshold:
    """``update-control/delta-threshold``: what makes a CST change significant (8)."""

    gas_absolute: int = 50
    gas_relative: float = 10.0  # percent
    computing_time_relative: float = 20.0  # percent
    health_change: bool = True


@dataclass(frozen=True, slots=True)
class RateLimit:
    """``update-control/rate-limit``: reports per sender per interval (8, Rate Limiting)."""

    enabled: bool = True
    max_reports: int = 100
    interval: int = 10
    throttle: bool = False  # action throttle; drop otherwise


@dataclass(frozen=True, slots=True)
class PriceDampening:
    """``update-control/price-dampening`` (9, Price Manipulation)."""

    enabled: bool = False
    increase_threshold: float = 20.0  # percent of the price in force
    window: int = 300


@dataclass(frozen=True, slots=True)
class UpdateControl:
    """The ``update-control`` leaves the ingest applies (service-metrics-op 8, 9)."""

    heartbeat_interval: int = 60
    expiry_multiplier: int = 3
    max_clock_skew: int = 10
    delta: DeltaThreshold = field(default_factory=DeltaThreshold)
    rate_limit: RateLimit = field(default_factory=RateLimit)
    dampening: PriceDampening = field(default_factory=PriceDampening)
    network_entry_lifetime: float | None = None
    dispatch: DispatchAccounting = field(default_factory=DispatchAccounting)

    @property
    def lifetime(self) -> float:
        """Seconds a CST entry lives without refresh: heartbeat x multiplier (8)."""
        return float(self.heartbeat_interval * self.expiry_multiplier)


@dataclass(frozen=True, slots=True)
class CpsConfig:
    """Everything the C-PS handlers read from running, parsed once per revision."""

    policy: Json = field(default_factory=dict)  # selection-policy as read
    settings: SelectionSettings = field(default_factory=SelectionSettings)
    update: UpdateControl = field(default_factory=UpdateControl)
    attachments: dict[str, Attachment] = field(default_factory=dict)
    decision_retention: int = 1000
    # plausibility as read; parsed by controller.service_metrics.plausibility (sessions, section 9)
    plausibility: Json = field(default_factory=dict)

    def requirement_document(self, cs_id: str, override: Mapping[str, Any]) -> Json:
        """Default requirement, then the service policy of the CS-ID, then the request."""
        merged = merge({}, self.policy.get("default-requirement", {}))
        for service in self.policy.get("service-policy", ()):
            if str(service["cs-id"]) == cs_id:
                merged = merge(merged, service.get("requirement", {}))
        return merge(merged, override)

    def fallback_egresses(self, cs_id: str) -> tuple[str, ...]:
        """The service policy's extra egresses for Fallback Level 2 (6.2.5)."""
        for service in self.policy.get("service-policy", ()):
            if str(service["cs-id"]) == cs_id:
                return tuple(service.get("fallback-egress", ()))
        return ()


def _attachment(doc: Mapping[str, Any]) -> Attachment:
    return Attachment(
        egress=doc.get("egress"),
        site=doc.get("site"),
        region=doc.get("region"),
        provider=doc.get("provider"),
        under_maintenance=bool(doc.get("under-maintenance", False)),
        security_level_validated=bool(doc.get("security-level-validated", False)),
        authorized_senders=frozenset(doc.get("authorized-sender", ())),
        gas_capacity=_int(doc.get("gas-capacity")),
    )


def update_control(doc: Mapping[str, Any]) -> UpdateControl:
    """The ``update-control`` container (service-metrics-op 8, 9)."""
    delta = doc.get("delta-threshold", {})
    rate = doc.get("rate-limit", {})
    damp = doc.get("price-dampening", {})
    lifetime = doc.get("network-entry-lifetime")
    accounting = doc.get("dispatch-accounting", {})
    return UpdateControl(
        heartbeat_interval=int(doc.get("heartbeat-interval", 60)),
        expiry_multiplier=int(doc.get("expiry-multiplier", 3)),
        max_clock_skew=int(doc.get("max-clock-skew", 10)),
        delta=DeltaThreshold(
            gas_absolute=int(delta.get("gas-absolute", 50)),
            gas_relative=float(Decimal(str(delta.get("gas-relative", 10)))),
            computing_time_relative=float(Decimal(str(delta.get("computing-time-relative", 20)))),
            health_change=bool(delta.get("health-change", True)),
        ),
        rate_limit=RateLimit(
            enabled=bool(rate.get("enabled", True)),
            max_reports=int(rate.get("max-reports", 100)),
            interval=int(rate.get("interval", 10)),
            throttle=rate.get("action", "drop") == "throttle",
        ),
        dampening=PriceDampening(
            enabled=bool(damp.get("enabled", False)),
            increase_threshold=float(Decimal(str(damp.get("increase-threshold", 20)))),
            window=int(damp.get("window", 300)),
        ),
        network_entry_lifetime=None if lifetime is None else float(lifetime),
        dispatch=DispatchAccounting(
            enabled=bool(accounting.get("enabled", False)),
            gas_per_selection=int(accounting.get("gas-per-selection", 1)),
            computing_time_per_selection=_ms(accounting.get("computing-time-per-selection")),
        ),
    )


def config(
    policy: Json, update: Json, attachments: Json, plausibility: Json | None = None
) -> CpsConfig:
    """The parsed configuration from the containers (each {} when not configured)."""
    lifetime = update.get("network-entry-lifetime")
    settings = SelectionSettings(
        time_sync_window=float(update.get("time-sync-window", 30)),
        network_entry_lifetime=None if lifetime is None else float(lifetime),
        fallback=fallback_policy(policy.get("fallback", {})),
        random_seed=int(policy.get("random-seed", 0)),
    )
    return CpsConfig(
        policy=policy,
        settings=settings,
        update=update_control(update),
        attachments={
            str(item["csci-id"]): _attachment(item) for item in attachments.get("attachment", ())
        },
        decision_retention=int(policy.get("decision-retention", 1000)),
        plausibility=plausibility or {},
    )
