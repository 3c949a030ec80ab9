"""The MSG-7 forwarding view: path-set and endpoint-cost (agent-selection-mapping 7.2)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

from agents.cnma.config import CnmaConfig
from agents.cnma.forwarding import (
    MODULE,
    OPERATION,
    ViewInputs,
    forwarding_view,
    fraction,
)
from agents.cnma.paths import endpoint_costs, network_service_table
from agents.cnma.report import Metadata, rpc_document
from agents.cnma.topology import Topology
from controller.model import InstanceKind, Schema
from controller.selection.units import Micros

META = Metadata(datetime(2026, 11, 30, tzinfo=UTC), Micros(60_000_000), "cnma-7.1")


def view(example: CnmaConfig, topology: Topology | None = None) -> ViewInputs:
    topology = topology or example.topology
    return ViewInputs(
        topology,
        network_service_table(topology, example.policy),
        endpoint_costs(topology, example.policy),
    )


def test_forwarding_view_validates_and_carries_costs(example: CnmaConfig, schema: Schema) -> None:
    members = forwarding_view(view(example), "cnma-7.1", 12, META)
    assert members is not None
    document = rpc_document(MODULE, OPERATION, members)
    schema.validate(json.dumps(document), InstanceKind.RPC)
    assert members["c-nma"] == "cnma-7.1"
    assert members["sequence-number"] == "12"
    by_csci = {c["csci-id"]: c for c in members["candidate"]}
    assert set(by_csci) == {"188.3.67.3:67", "188.3.67.3:68", "188.3.67.4:69", "188.3.67.4:70"}
    (path,) = by_csci["188.3.67.4:69"]["path-set"]["path"]
    assert path["path-id"] == "p:10.0.0.1/188.3.67.4"
    assert (path["delay"], path["loss"]) == ({"mean": "6.000"}, "0.0001")
    assert path["egress-capacity"] == str(2500 * 125_000)
    costs = {e["prefix"]: e for e in by_csci["188.3.67.4:69"]["endpoint-cost"]["endpoint"]}
    assert (costs["203.0.113.0/24"]["reachable"], costs["203.0.113.0/24"]["mean"]) == (
        True,
        "0.000",
    )
    assert costs["198.51.100.0/24"]["mean"] == "4.000"


def test_unreachable_endpoint_is_reported_unreachable(example: CnmaConfig, schema: Schema) -> None:
    links = tuple(link for link in example.topology.links if "P1" not in (link.source, link.target))
    members = forwarding_view(view(example, replace(example.topology, links=links)), "x", 1, META)
    assert members is not None
    schema.validate(json.dumps(rpc_document(MODULE, OPERATION, members)), InstanceKind.RPC)
    by_csci = {c["csci-id"]: c for c in members["candidate"]}
    endpoints = by_csci["188.3.67.3:67"]["endpoint-cost"]["endpoint"]
    assert {e["prefix"]: e["reachable"] for e in endpoints} == {
        "198.51.100.0/24": False,
        "203.0.113.0/24": False,
    }
    assert "path-set" not in by_csci["188.3.67.4:69"]  # CF-3 is cut off from the ingress


def test_no_candidates_no_view(example: CnmaConfig) -> None:
    bare = replace(example.topology, candidates=())
    assert forwarding_view(view(example, bare), "x", 1, META) is None


def test_loss_fraction_rounds_to_four_digits() -> None:
    assert (fraction(0), fraction(49), fraction(50), fraction(1_000_000)) == (
        "0.0000",
        "0.0000",
        "0.0001",
        "1.0000",
    )
