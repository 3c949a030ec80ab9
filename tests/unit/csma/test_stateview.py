"""agents.csma.stateview: query answers, retention, reseeding and presence changes."""

from __future__ import annotations

import json
from decimal import Decimal

from agents.csma.stateview import (
    Element,
    Presence,
    StateQuery,
    StateView,
    evict_expired,
    notifications,
    query,
    reseed,
    state_json,
)
from controller.model import InstanceKind, Schema
from controller.types import CsciId, ReuseKey, TenantId

A, B = CsciId("10.0.0.1:80"), CsciId("10.0.0.2:80")
T = TenantId("t1")
K = ReuseKey("kv/1")
HELD = Element(
    A,
    T,
    K,
    Presence.PRESENT,
    "accelerator-memory",
    "model-context-state",
    4096,
    Decimal("12.5"),
    Decimal(800),
    held_since=100.0,
    retention=60,
)
VIEW = StateView({HELD.key: HELD}, frozenset({A}))


def test_query_answers_present_absent_and_unknown() -> None:
    asked = StateQuery(T, (K, ReuseKey("kv/2")), frozenset({A, B}))
    output = query(VIEW, asked, 101.5, "csma-1")
    by_csci = {c["csci-id"]: c["element"] for c in output["candidate"]}
    held, missing = by_csci[A]
    assert held["presence"] == "present"
    assert held["residency"] == "ietf-cats-agent-selection:accelerator-memory"
    assert (held["state-age"], held["retention"]) == ("1500.000", 58)
    assert (held["retrieval-cost"], held["recompute-cost"]) == ("12.500", "800.000")
    assert missing["presence"] == "absent"
    assert "residency" not in missing
    assert [e["presence"] for e in by_csci[B]] == ["unknown", "unknown"]  # not answered for


def test_retention_evicts_and_the_change_is_notified(schema: Schema) -> None:
    assert evict_expired(VIEW, 159.0) is VIEW
    after = evict_expired(VIEW, 160.0)
    assert after.elements[HELD.key].presence is Presence.ABSENT
    (document,) = notifications(VIEW, after, 160.0, "csma-1")
    body = document["ietf-cats-agent-selection:state-presence-changed"]
    assert (body["csci-id"], body["tenant"], body["element"][0]["presence"]) == (A, T, "absent")
    schema.validate(json.dumps(document), InstanceKind.NOTIF)


def test_reseed_replaces_seeds_and_drops_the_unseeded() -> None:
    moved = Element(A, T, ReuseKey("kv/9"), Presence.PRESENT, "host-memory", held_since=0.0)
    after = reseed(VIEW, [moved], frozenset({A}))
    assert after.elements[HELD.key].presence is Presence.ABSENT
    assert after.elements[moved.key] == moved
    assert len(notifications(VIEW, after, 1.0, "csma-1")) == 1  # one (instance, tenant)


def test_the_state_view_renders_as_valid_operational_data(schema: Schema) -> None:
    document = state_json(VIEW, {A: "ARS"}, 101.0, "csma-1")
    schema.validate(json.dumps(document), InstanceKind.DATA)
