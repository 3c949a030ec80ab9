"""Decision records across a restart (count and age bounded) and the provenance of steering
entries (controller.service_metrics.provenance), on a real state directory, no sockets."""

from __future__ import annotations

from pathlib import Path

from controller.datastore.api import Principal
from controller.service_metrics.policy import config
from controller.service_metrics.service import ServiceMetrics
from controller.types import CsId, ForwarderId, Json
from tests.unit.service_metrics.test_service import (
    CNMA,
    CSMA,
    SM,
    Clock,
    Config,
    cst_report,
    item,
    stamp,
)


def built(
    state: Path, clock: Clock, retention: int = 10, max_age: float = 3600.0, sequence: int = 1
) -> ServiceMetrics:
    """A started C-PS keeping its decisions in ``state``, with two ARS candidates (its
    reports numbered ``sequence``: the senders' ledger survives a restart too)."""
    parsed = config({"decision-retention": retention}, {}, {})
    cps = ServiceMetrics(Config(parsed), clock, state_dir=state, decision_max_age=max_age)
    cps.start()
    entries = (item("188.3.67.3:67", 400, "5", 5), item("188.3.67.4:69", 600, "6", 5))
    cps.report_service_metrics(CSMA, cst_report(sequence, *entries, at=clock.now))
    paths = [
        {"ingress": "10.0.0.1", "egress": "188.3.67.3", "delay": "8"},
        {"ingress": "10.0.0.1", "egress": "188.3.67.4", "delay": "6"},
    ]
    report = {"sequence-number": str(sequence), "timestamp": stamp(clock.now), "path": paths}
    cps.report_network_metrics(CNMA, report)
    return cps


def select(cps: ServiceMetrics) -> str:
    reply = cps.select_service(Principal("cf-1"), {"cs-id": "ARS", "ingress": "10.0.0.1"})
    return str(reply["decision-id"])


def kept(cps: ServiceMetrics) -> list[Json]:
    found: list[Json] = cps.decisions_state()[f"{SM}:selection-decisions"].get("decision", [])
    return found


def test_decision_records_survive_a_restart_and_numbers_go_on(tmp_path: Path) -> None:
    clock = Clock()
    first = built(tmp_path, clock)
    ids = [select(first), select(first)]
    first.close()
    again = built(tmp_path, clock, sequence=2)
    try:
        assert [str(r["id"]) for r in kept(again)] == ids
        assert kept(again)[0]["csci-id"] == "188.3.67.4:69"  # the record, not just its id
        assert int(select(again)) > int(ids[-1])
    finally:
        again.close()


def test_the_retained_window_is_bounded_by_count_and_age(tmp_path: Path) -> None:
    clock = Clock()
    first = built(tmp_path, clock, retention=2, max_age=100.0)
    for _ in range(4):
        select(first)
    assert len(kept(first)) == 2
    first.close()
    clock.now += 200.0  # older than the maximum age
    again = built(tmp_path, clock, retention=2, max_age=100.0, sequence=2)
    try:
        assert kept(again) == []
    finally:
        again.close()


def test_a_steering_entry_names_a_kept_record_and_when_it_stood(tmp_path: Path) -> None:
    clock = Clock()
    cps = built(tmp_path, clock)
    try:
        decision = cps.steering_record(CsId("ARS"), ForwarderId("10.0.0.1"), "ingress")
        record = next(r for r in kept(cps) if str(r["id"]) == decision)
        assert record["trigger"] == "re-evaluation"
        assert record["request"]["requester"] == "steering ingress"
        assert {c["csci-id"] for c in record["candidate"]} == {"188.3.67.3:67", "188.3.67.4:69"}
        cps.installed("ingress", CsId("ARS"), {"cs-id": "ARS", "decision-id": decision})
        asked = {"forwarder": "ingress", "cs-id": "ARS"}
        found = cps.steering_provenance(Principal("admin"), asked)
        assert found["decision-id"] == decision
        assert "replaced-at" not in found
        before = cps.steering_provenance(
            Principal("admin"), {**asked, "at": "2000-01-01T00:00:00Z"}
        )
        assert before == {}
    finally:
        cps.close()
