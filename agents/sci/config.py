"""The SCI configuration: the ``ietf-cats-sci:sci`` container as frozen settings.

:func:`load_config` validates the file with libyang (controller.model) and then reads the
validated RFC 7951 JSON with :func:`parse_config`, which applies the YANG defaults; a unit test
checks these defaults against the module so the two cannot drift apart. Every configured
duration is in milliseconds, as the module's ``...-ms`` leaves have it (docs/yang-conventions.md);
the code divides by 1000 where it waits or compares with clock seconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from agents.sci.errors import SciError, refused
from agents.sci.values import SiId
from controller.errors import ErrorItem
from controller.model import InstanceKind, ModelError, Schema
from controller.types import CsciId, CsId, Json

MODULE = "ietf-cats-sci"
TOP = f"{MODULE}:sci"


def identity(value: str) -> str:
    """An identityref value without its module prefix (RFC 7951 6.8)."""
    return value.rpartition(":")[2]


@dataclass(frozen=True, slots=True)
class InstanceConfig:
    """One ``service-instance`` (sci-implementation 2, 4)."""

    si_id: SiId
    address: str
    max_capacity: int
    port: int | None = None
    service_uri: str | None = None
    metrics_uri: str | None = None
    health_uri: str | None = None
    readiness_uri: str | None = None
    collection_method: str | None = None
    weight: int = 1
    admin_state: str = "in-service"

    def base_url(self, default_port: int) -> str:
        """Where requests are forwarded: ``service-uri``, else ``http://address:port``."""
        if self.service_uri:
            return self.service_uri.rstrip("/")
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"http://{host}:{self.port or default_port}"


@dataclass(frozen=True, slots=True)
class CollectionSettings:
    """``metric-collection`` (4.1, 4.2)."""

    method: str = "pull-based"
    sampling_interval_ms: int = 5000
    stale_after: int = 3


@dataclass(frozen=True, slots=True)
class ResourceThreshold:
    """``health-monitoring/performance/resource-threshold`` (5.1)."""

    resource: str
    utilization: float
    duration_ms: int = 30_000


@dataclass(frozen=True, slots=True)
class HealthSettings:
    """``health-monitoring`` (5.1, 5.2)."""

    liveness_method: str = "tcp-connect"
    liveness_interval_ms: int = 5000
    liveness_timeout_ms: int = 2000
    readiness_interval_ms: int = 30_000
    readiness_timeout_ms: int = 5000
    performance_interval_ms: int = 30_000
    response_time_threshold_ms: float | None = None
    error_rate_threshold: float | None = None
    resource_thresholds: tuple[ResourceThreshold, ...] = ()
    failures_to_down: int = 3
    passes_to_up: int = 2
    unhealthy_session_action: str = "terminate"
    redispatch_in_flight: bool = False


@dataclass(frozen=True, slots=True)
class AggregationSettings:
    """``aggregation`` (4.3, 5.3)."""

    safety_margin: float = 100.0
    degradation_factor: float = 50.0
    estimator: str = "load-weighted-mean"
    estimator_rank: float = 95.0
    degraded_weight: float = 50.0
    measurement_window_ms: int = 10_000
    health_batch_window_ms: int = 1000


@dataclass(frozen=True, slots=True)
class DispatchSettings:
    """``dispatch`` (6.1)."""

    algorithm: str = "least-connections"
    resource_aware_resources: tuple[str, ...] = ("cpu", "memory", "gpu")
    degraded_last_resort: bool = True
    action: str = "reject"
    reject_status: int = 503
    queue_timeout_ms: int = 1000
    queue_limit: int | None = None


FIVE_TUPLE = (
    "source-address",
    "destination-address",
    "source-port",
    "destination-port",
    "protocol",
)


@dataclass(frozen=True, slots=True)
class AffinitySettings:
    """``affinity`` (6.2, 6.3)."""

    flow_enabled: bool = True
    flow_key: tuple[str, ...] = FIVE_TUPLE
    session_cookie: str | None = None
    session_header: str | None = None
    binding_timeout_ms: int = 120_000
    renew_on_activity: bool = True
    max_bindings: int | None = None


DEFAULT_TRIGGERS = frozenset(
    {
        "gas-absolute-change",
        "gas-relative-change",
        "computing-time-deviation",
        "instance-health-change",
        "all-instances-unhealthy",
        "instance-recovered",
        "security-event",
    }
)


@dataclass(frozen=True, slots=True)
class ReportingSettings:
    """``reporting`` (7.2)."""

    heartbeat_interval_ms: int = 60_000
    freshness_multiplier: int = 3
    gas_absolute: int = 50
    gas_relative: float = 10.0
    computing_time_relative: float = 20.0
    triggers: frozenset[str] = DEFAULT_TRIGGERS
    min_interval_ms: int = 1000
    max_reports: int | None = None
    rate_interval_ms: int = 60_000
    events_exempt: bool = True
    include_instance_details: bool = False


@dataclass(frozen=True, slots=True)
class SciConfig:
    """The whole ``sci`` container (sci-implementation 3)."""

    csci_id: CsciId
    cs_id: CsId
    address: str
    port: int
    instances: tuple[InstanceConfig, ...]
    restconf_uri: str | None = None
    netconf: tuple[str, int] | None = None
    optional_metrics: Json | None = None
    permitted_sources: tuple[str, ...] = ()
    max_request_rate: int | None = None
    collection: CollectionSettings = CollectionSettings()
    health: HealthSettings = HealthSettings()
    aggregation: AggregationSettings = AggregationSettings()
    dispatch: DispatchSettings = DispatchSettings()
    affinity: AffinitySettings = AffinitySettings()
    reporting: ReportingSettings = ReportingSettings()

    def instance(self, si_id: SiId) -> InstanceConfig:
        """The configuration of one instance."""
        return next(item for item in self.instances if item.si_id == si_id)


def _health(doc: Json) -> HealthSettings:
    live, ready = doc.get("liveness", {}), doc.get("readiness", {})
    perf, hyst = doc.get("performance", {}), doc.get("hysteresis", {})
    base = HealthSettings()
    rt, er = perf.get("response-time-threshold"), perf.get("error-rate-threshold")
    return HealthSettings(
        liveness_method=live.get("method", base.liveness_method),
        liveness_interval_ms=int(live.get("interval-ms", base.liveness_interval_ms)),
        liveness_timeout_ms=int(live.get("timeout-ms", base.liveness_timeout_ms)),
        readiness_interval_ms=int(ready.get("interval-ms", base.readiness_interval_ms)),
        readiness_timeout_ms=int(ready.get("timeout-ms", base.readiness_timeout_ms)),
        performance_interval_ms=int(perf.get("interval-ms", base.performance_interval_ms)),
        response_time_threshold_ms=None if rt is None else float(rt),
        error_rate_threshold=None if er is None else float(er),
        resource_thresholds=tuple(
            ResourceThreshold(
                item["resource"], float(item["utilization"]), int(item.get("duration-ms", 30_000))
            )
            for item in perf.get("resource-threshold", ())
        ),
        failures_to_down=int(hyst.get("failures-to-down", base.failures_to_down)),
        passes_to_up=int(hyst.get("passes-to-up", base.passes_to_up)),
        unhealthy_session_action=doc.get("unhealthy-session-action", base.unhealthy_session_action),
        redispatch_in_flight=bool(doc.get("redispatch-in-flight", base.redispatch_in_flight)),
    )


def _aggregation(doc: Json) -> AggregationSettings:
    base = AggregationSettings()
    return AggregationSettings(
        safety_margin=float(doc.get("safety-margin", base.safety_margin)),
        degradation_factor=float(doc.get("degradation-factor", base.degradation_factor)),
        estimator=identity(doc.get("computing-time-estimator", base.estimator)),
        estimator_rank=float(doc.get("estimator-rank", base.estimator_rank)),
        degraded_weight=float(doc.get("degraded-weight", base.degraded_weight)),
        measurement_window_ms=int(doc.get("measurement-window-ms", base.measurement_window_ms)),
        health_batch_window_ms=int(doc.get("health-batch-window-ms", base.health_batch_window_ms)),
    )


def _dispatch(doc: Json) -> DispatchSettings:
    base, none = DispatchSettings(), doc.get("no-healthy-instance", {})
    limit = none.get("queue-limit")
    return DispatchSettings(
        algorithm=identity(doc.get("algorithm", base.algorithm)),
        resource_aware_resources=tuple(
            doc.get("resource-aware-resources", base.resource_aware_resources)
        ),
        degraded_last_resort=bool(doc.get("degraded-last-resort", base.degraded_last_resort)),
        action=none.get("action", base.action),
        reject_status=int(none.get("reject-status", base.reject_status)),
        queue_timeout_ms=int(none.get("queue-timeout-ms", base.queue_timeout_ms)),
        queue_limit=None if limit is None else int(limit),
    )


def _affinity(doc: Json) -> AffinitySettings:
    base, flow, session = (
        AffinitySettings(),
        doc.get("flow-affinity", {}),
        doc.get("session-affinity"),
    )
    limit = doc.get("max-bindings")
    return AffinitySettings(
        flow_enabled=bool(flow.get("enabled", base.flow_enabled)),
        flow_key=tuple(flow.get("flow-key", base.flow_key)),
        session_cookie=(session or {}).get("cookie-name"),
        session_header=(session or {}).get("header-name"),
        binding_timeout_ms=int(doc.get("binding-timeout-ms", base.binding_timeout_ms)),
        renew_on_activity=bool(doc.get("renew-on-activity", base.renew_on_activity)),
        max_bindings=None if limit is None else int(limit),
    )


def _reporting(doc: Json) -> ReportingSettings:
    base, thresholds, rate = (
        ReportingSettings(),
        doc.get("thresholds", {}),
        doc.get("rate-limit", {}),
    )
    most = rate.get("max-reports")
    triggers = doc.get("trigger")
    return ReportingSettings(
        heartbeat_interval_ms=int(doc.get("heartbeat-interval-ms", base.heartbeat_interval_ms)),
        freshness_multiplier=int(doc.get("freshness-multiplier", base.freshness_multiplier)),
        gas_absolute=int(thresholds.get("gas-absolute", base.gas_absolute)),
        gas_relative=float(thresholds.get("gas-relative", base.gas_relative)),
        computing_time_relative=float(
            thresholds.get("computing-time-relative", base.computing_time_relative)
        ),
        triggers=base.triggers if triggers is None else frozenset(map(identity, triggers)),
        min_interval_ms=int(rate.get("min-interval-ms", base.min_interval_ms)),
        max_reports=None if most is None else int(most),
        rate_interval_ms=int(rate.get("interval-ms", base.rate_interval_ms)),
        events_exempt=bool(rate.get("events-exempt", base.events_exempt)),
        include_instance_details=bool(
            doc.get("include-instance-details", base.include_instance_details)
        ),
    )


def _instance(doc: Json) -> InstanceConfig:
    port = doc.get("port")
    method = doc.get("collection-method")
    return InstanceConfig(
        si_id=SiId(doc["si-id"]),
        address=doc["address"],
        max_capacity=int(doc["max-capacity"]),
        port=None if port is None else int(port),
        service_uri=doc.get("service-uri"),
        metrics_uri=doc.get("metrics-uri"),
        health_uri=doc.get("health-uri"),
        readiness_uri=doc.get("readiness-uri"),
        collection_method=None if method is None else identity(method),
        weight=int(doc.get("weight", 1)),
        admin_state=doc.get("admin-state", "in-service"),
    )


def parse_config(document: Json) -> SciConfig:
    """Settings from a validated ``{"ietf-cats-sci:sci": {...}}`` document, defaults applied."""
    sci: Json = document[TOP]
    client, c_sma = sci["client-interface"], sci["c-sma"]
    netconf = c_sma.get("netconf")
    collection = sci.get("metric-collection", {})
    return SciConfig(
        csci_id=CsciId(str(sci["csci-id"])),
        cs_id=CsId(str(sci["cs-id"])),
        address=client["address"],
        port=int(client["port"]),
        instances=tuple(_instance(item) for item in sci.get("service-instance", ())),
        restconf_uri=c_sma.get("restconf-uri"),
        netconf=None if netconf is None else (netconf["address"], int(netconf.get("port", 830))),
        optional_metrics=sci.get("optional-metrics") or None,
        permitted_sources=tuple(client.get("permitted-source", ())),
        max_request_rate=client.get("max-request-rate"),
        collection=CollectionSettings(
            method=identity(collection.get("method", "pull-based")),
            sampling_interval_ms=int(collection.get("sampling-interval-ms", 5000)),
            stale_after=int(collection.get("stale-after", 3)),
        ),
        health=_health(sci.get("health-monitoring", {})),
        aggregation=_aggregation(sci.get("aggregation", {})),
        dispatch=_dispatch(sci.get("dispatch", {})),
        affinity=_affinity(sci.get("affinity", {})),
        reporting=_reporting(sci.get("reporting", {})),
    )


@dataclass(frozen=True, slots=True)
class Overrides:
    """Command-line values that replace those of the file before validation."""

    listen: tuple[str, int] | None = None
    c_sma_url: str | None = None


def apply_overrides(document: Json, overrides: Overrides) -> Json:
    """The document with the overrides applied (a CSCI-ID locator follows ``--listen``)."""
    sci: Json = dict(document.get(TOP, {}))
    if overrides.listen is not None:
        address, port = overrides.listen
        client: Json = dict(sci.get("client-interface", {}))
        old = f"{client.get('address')}:{client.get('port')}"
        client.update(address=address, port=port)
        if sci.get("csci-id") == old:
            sci["csci-id"] = f"{address}:{port}"
        sci["client-interface"] = client
    if overrides.c_sma_url is not None:
        sci["c-sma"] = {"restconf-uri": overrides.c_sma_url}
    return {**document, TOP: sci}


def load_config(
    path: Path, schema: Schema, overrides: Overrides = Overrides()
) -> tuple[Json, SciConfig]:
    """Read, override, validate (libyang, as configuration) and parse an SCI configuration.

    Raises:
        SciError: naming the file and, for a schema violation, the offending data path.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise refused(
            f"{path}: cannot read the configuration: {exc}", tag="malformed-message"
        ) from exc
    if not isinstance(document, dict) or TOP not in document:
        raise refused(f"{path}: no {TOP} container", path=f"/{TOP}", tag="missing-element")
    document = apply_overrides(document, overrides)
    try:
        schema.validate(json.dumps(document), InstanceKind.CONFIG)
    except ModelError as exc:
        raise SciError(*(_in_file(path, item) for item in exc.items)) from exc
    return document, parse_config(document)


def _in_file(path: Path, item: ErrorItem) -> ErrorItem:
    return replace(item, message=f"{path}: {item.message}")
