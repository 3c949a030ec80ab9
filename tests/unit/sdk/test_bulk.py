"""The bulk path's members are valid RPC input, the same data the objects path writes."""

from __future__ import annotations

import json

from controller.model import InstanceKind, Schema
from controller.sdk import bulk, objects
from controller.sdk.objects import SM


def test_a_service_report_validates_and_equals_the_objects_path(schema: Schema) -> None:
    entries = [
        bulk.cst_entry(
            "ARS",
            "188.3.67.4:69",
            gas=600,
            computing_time="6.5",
            price=5,
            health="healthy",
            egress="188.3.67.4",
            extra={"source": "sci-3"},
        )
    ]
    members = bulk.service_report(7, entries, site="SS3", timestamp="2026-11-30T10:00:00Z")
    schema.validate(json.dumps({f"{SM}:report-service-metrics": members}), InstanceKind.RPC)
    built = objects.operation(SM, "report-service-metrics").input
    built.sequence_number, built.timestamp = 7, "2026-11-30T10:00:00Z"
    built.report_type, built.site = "full", "SS3"
    entry = built.entry.add(cs_id="ARS", csci_id="188.3.67.4:69")
    entry.gas, entry.computing_time, entry.price = 600, "6.5", 5
    entry.health, entry.egress, entry.source = "healthy", "188.3.67.4", "sci-3"
    assert objects.to_members(built) == members


def test_a_network_report_validates(schema: Schema) -> None:
    paths = [
        bulk.nst_path("10.0.0.1", "188.3.67.3", delay=8, jitter="0.5"),
        bulk.nst_path("10.0.0.1", "188.3.67.4", delay=6),
    ]
    members = bulk.network_report(8, paths, report_type="delta")
    schema.validate(json.dumps({f"{SM}:report-network-metrics": members}), InstanceKind.RPC)
    assert members["sequence-number"] == "8"  # uint64 as a string (RFC 7951 6.1)
    assert [path["delay"] for path in members["path"]] == ["8", "6"]
