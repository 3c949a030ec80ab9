"""controller.service_metrics.decisions: an estimated Computing Time is named in every
candidate report and decision record (service-metrics-op 5.3.2, 6.2.3 Step 4; "the record
says which values were stale, unknown or estimated")."""

from __future__ import annotations

import json

import pytest

from controller.datastore.api import Principal
from controller.model import InstanceKind, Schema
from controller.service_metrics.policy import config
from controller.service_metrics.service import ServiceMetrics
from controller.types import Json
from tests.unit.service_metrics.test_service import (
    CNMA,
    CSMA,
    SM,
    T0,
    Clock,
    Config,
    cst_report,
    item,
    stamp,
)

NEW, OLD = "188.3.67.3:67", "188.3.67.4:69"
ESTIMATED = [f"{SM}:computing-time", f"{SM}:total-service-time"]


@pytest.fixture
def service() -> ServiceMetrics:
    """A C-PS whose CST holds a new site's estimated entry (1 ms, the fastest) and a
    measured one, both 8 ms of network delay away."""
    cps = ServiceMetrics(Config(config({}, {}, {})), Clock())
    new = {**item(NEW, 400, "1", 5), "confidence": "estimated"}
    old = {**item(OLD, 400, "6", 5), "confidence": "asserted"}
    cps.report_service_metrics(CSMA, cst_report(1, new, old))
    paths = [
        {"ingress": "10.0.0.1", "egress": egress, "delay": "8"}
        for egress in ("188.3.67.3", "188.3.67.4")
    ]
    cps.report_network_metrics(
        CNMA, {"sequence-number": "1", "timestamp": stamp(T0), "path": paths}
    )
    return cps


def _select(service: ServiceMetrics, report: str) -> Json:
    members = {"cs-id": "ARS", "ingress": "10.0.0.1", "candidate-report": report}
    return service.select_service(Principal("cf-1"), members)


def test_the_cst_keeps_the_confidence_of_each_entry(service: ServiceMetrics) -> None:
    table = service.cst_state()[f"{SM}:computing-service-table"]["entry"]
    assert {e["csci-id"]: e["confidence"] for e in table} == {NEW: "estimated", OLD: "asserted"}


def test_every_candidate_report_names_its_estimated_values(service: ServiceMetrics) -> None:
    reply = _select(service, "all")
    assert (reply["csci-id"], reply["estimated-metric"]) == (NEW, ESTIMATED)
    by_csci = {c["csci-id"]: c for c in reply["candidate"]}
    assert by_csci[NEW]["estimated-metric"] == ESTIMATED
    assert "estimated-metric" not in by_csci[OLD]


@pytest.mark.parametrize("report", ["examined", "none"])
def test_the_fast_path_and_a_bare_decision_say_it_too(service: ServiceMetrics, report: str) -> None:
    reply = _select(service, report)
    assert (reply["csci-id"], reply["estimated-metric"]) == (NEW, ESTIMATED)
    for candidate in reply.get("candidate", ()):
        assert ("estimated-metric" in candidate) == (candidate["csci-id"] == NEW)


def test_a_measured_winner_has_no_estimated_metric(service: ServiceMetrics) -> None:
    measured = {**item(NEW, 400, "1", 5), "confidence": "asserted"}
    service.report_service_metrics(CSMA, {**cst_report(2, measured), "report-type": "delta"})
    reply = _select(service, "all")
    assert reply["csci-id"] == NEW
    assert "estimated-metric" not in reply
    assert all("estimated-metric" not in c for c in reply["candidate"])


def test_the_kept_decision_record_validates_and_names_them(
    service: ServiceMetrics, schema: Schema
) -> None:
    _select(service, "all")
    _select(service, "none")
    state = service.decisions_state()
    schema.validate(json.dumps(state), InstanceKind.DATA)
    first, second = state[f"{SM}:selection-decisions"]["decision"]
    assert first["estimated-metric"] == second["estimated-metric"] == ESTIMATED
    (new,) = (c for c in first["candidate"] if c["csci-id"] == NEW)
    assert new["estimated-metric"] == ESTIMATED
