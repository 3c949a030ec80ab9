"""The C-PS service-metrics handlers on plain values: a fake configuration and clock."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from controller.datastore.api import Principal
from controller.errors import CatsError
from controller.service_metrics.policy import CpsConfig, config
from controller.service_metrics.service import ServiceMetrics
from controller.types import Json

SM = "ietf-cats-service-metrics"
T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC).timestamp()
CSMA = Principal("c-sma-ss3")
CNMA = Principal("c-nma-1")


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class Config:
    """A configuration source holding one parsed configuration."""

    def __init__(self, parsed: CpsConfig) -> None:
        self.parsed = parsed

    def __call__(self) -> CpsConfig:
        return self.parsed


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def service(clock: Clock) -> ServiceMetrics:
    attachments = {"attachment": [{"csci-id": "188.3.67.4:70", "authorized-sender": ["other"]}]}
    policy = {"decision-retention": 2}
    return ServiceMetrics(Config(config(policy, {}, attachments)), clock)


def stamp(moment: float = T0) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat()


def cst_report(sequence: int, *entries: Json, at: float = T0) -> Json:
    return {"sequence-number": str(sequence), "timestamp": stamp(at), "entry": list(entries)}


def item(csci: str, gas: int, ct: str, price: int, cs: str = "ARS") -> Json:
    egress = csci.rsplit(":", 1)[0]
    return {
        "cs-id": cs,
        "csci-id": csci,
        "gas": gas,
        "computing-time": ct,
        "price": price,
        "health": "healthy",
        "egress": egress,
        "source": "sci",
    }


def section7(service: ServiceMetrics, cf3: Json) -> None:
    service.report_service_metrics(
        CSMA, cst_report(1, item("188.3.67.3:67", 400, "5", 10), item("188.3.67.4:69", 600, "6", 5))
    )
    paths = [
        {"ingress": "10.0.0.1", "egress": "188.3.67.3", "delay": "8"},
        {"ingress": "10.0.0.1", "egress": "188.3.67.4", **cf3},
    ]
    service.report_network_metrics(
        CNMA, {"sequence-number": "9", "timestamp": stamp(), "path": paths}
    )


def select(service: ServiceMetrics, requirement: Json | None = None) -> Json:
    members: Json = {"cs-id": "ARS", "ingress": "10.0.0.1"}
    if requirement:
        members["requirement"] = requirement
    return service.select_service(Principal("cf-1"), members)


def state(provider: Any, name: str) -> Any:
    return provider()[f"{SM}:{name}"]


def test_scenario_a_with_delay_us_converted_exactly(service: ServiceMetrics) -> None:
    section7(service, {"delay-us": 6000})
    reply = select(service)
    assert reply["decision-id"] == "1"
    assert (reply["result"], reply["fallback-level"]) == ("selected", "none")
    assert (reply["csci-id"], reply["total-service-time"]) == ("188.3.67.4:69", "12.000")
    first, second = reply["candidate"]
    assert (first["csci-id"], first["rank"], first["total-service-time"]) == (
        "188.3.67.4:69",
        1,
        "12.000",
    )
    assert (second["csci-id"], second["total-service-time"]) == ("188.3.67.3:67", "13.000")
    assert "score" in first
    assert "reason" not in first


def test_scenario_d_excluded_candidate_has_a_reason_and_no_score(service: ServiceMetrics) -> None:
    section7(service, {"delay": "6"})
    reply = select(service, {"hard-constraints": {"max-price": 8}})
    assert reply["csci-id"] == "188.3.67.4:69"
    excluded = next(c for c in reply["candidate"] if c["csci-id"] == "188.3.67.3:67")
    assert excluded["reason"] == f"{SM}:price-above-maximum"
    assert "score" not in excluded


def test_non_increasing_sequence_is_refused_and_counted(service: ServiceMetrics) -> None:
    section7(service, {"delay": "6"})
    with pytest.raises(CatsError) as caught:
        service.report_service_metrics(CSMA, cst_report(1, item("188.3.67.4:69", 1, "1", 1)))
    (error,) = caught.value.items
    assert (error.tag, error.app_tag) == ("invalid-value", "sequence-not-increasing")
    assert error.path == f"/{SM}:report-service-metrics/sequence-number"
    senders = {s["source"]: s for s in state(service.senders_state, "report-senders")["sender"]}
    counters = senders["c-sma-ss3"]["counters"]
    assert (counters["refused-sequence"], counters["reports-accepted"]) == ("1", "1")
    assert senders["c-sma-ss3"]["component"] == "ietf-cats-types:c-sma"
    assert senders["c-nma-1"]["component"] == "ietf-cats-types:c-nma"
    assert senders["c-sma-ss3"]["entries"] == 2
    cst = state(service.cst_state, "computing-service-table")["entry"]
    assert {e["gas"] for e in cst} == {400, 600}  # the refused report changed nothing


def test_clock_skew_is_refused(service: ServiceMetrics) -> None:
    late = cst_report(1, item("188.3.67.4:69", 1, "1", 1), at=T0 - 11)
    with pytest.raises(CatsError) as caught:
        service.report_service_metrics(CSMA, late)
    assert caught.value.items[0].app_tag == "clock-skew-exceeded"
    service.report_service_metrics(CSMA, cst_report(1, item("188.3.67.4:69", 1, "1", 1), at=T0 - 9))


def test_unauthorized_sender_entry_is_refused_alone(service: ServiceMetrics) -> None:
    reply = service.report_service_metrics(
        CSMA,
        cst_report(
            1, item("188.3.67.4:70", 300, "12", 15, cs="LLMS"), item("188.3.67.4:69", 6, "6", 5)
        ),
    )
    assert reply["accepted-entries"] == 1
    (refused,) = reply["refused-entry"]
    assert refused["reason"] == f"{SM}:sender-not-authorized"


def test_cst_renders_age_source_and_aging(service: ServiceMetrics, clock: Clock) -> None:
    section7(service, {"delay": "6"})
    clock.now = T0 + 2.5
    rows = {e["csci-id"]: e for e in state(service.cst_state, "computing-service-table")["entry"]}
    sci3 = rows["188.3.67.4:69"]
    assert (sci3["source"], sci3["observed-by"], sci3["sequence"]) == ("c-sma-ss3", "sci", "1")
    assert (sci3["age"], sci3["aged-out"], sci3["gas"]) == ("2500.000", False, 600)
    assert sci3["last-updated"] == "2026-11-30T10:00:00.000000Z"
    assert sci3["expiry-time"] == "2026-11-30T10:03:00.000000Z"
    clock.now = T0 + 180
    sci3 = state(service.cst_state, "computing-service-table")["entry"][1]
    assert (sci3["aged-out"], sci3["gas"], sci3["reported-gas"]) == (True, 0, 600)
    nst = state(service.nst_state, "network-service-table")["entry"]
    assert {(e["egress"], Decimal(e["network-delay"])) for e in nst} == {
        ("188.3.67.3", Decimal(8)),
        ("188.3.67.4", Decimal(6)),
    }


def test_decisions_are_bounded_by_retention(service: ServiceMetrics) -> None:
    section7(service, {"delay": "6"})
    for _ in range(3):
        select(service)
    kept = state(service.decisions_state, "selection-decisions")
    assert kept["statistics"]["decisions"] == "3"
    assert [d["id"] for d in kept["decision"]] == ["2", "3"]
    assert kept["decision"][0]["request"]["requester"] == "cf-1"


def test_empty_tables_render_empty_containers(service: ServiceMetrics) -> None:
    assert state(service.cst_state, "computing-service-table") == {}
    assert state(service.nst_state, "network-service-table") == {}
    assert state(service.senders_state, "report-senders") == {}
    reply = select(service)
    assert reply["result"] in {"service-unavailable", "default-route"}
