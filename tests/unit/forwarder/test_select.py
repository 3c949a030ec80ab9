"""agents.forwarder.select: the most specific match, then the service entry, then the
default route (ietf-cats-steering ``steering``; service-metrics-op 6.2.5)."""

from __future__ import annotations

from typing import Any

from agents.forwarder.select import local_choice, lookup, matches, route
from agents.forwarder.table import Reach, Table, accept, build
from agents.forwarder.values import FlowMatch, Locator, Match, Request, ServiceEntry, locator
from controller.types import CsId, SessionId
from tests.unit.forwarder.helpers import A, B, rule, service, steering

T0 = 1_000_000.0
C = "192.0.2.30:8800"


def _table(services: list[dict[str, Any]], rules: list[dict[str, Any]]) -> Table:
    configured = steering(services, rules)
    return build(configured, accept({}, configured, T0), T0, Reach())


def _request(session: str | None = "s1", step: int | None = None, **more: Any) -> Request:
    return Request(CsId("ARS"), SessionId(session) if session else None, step_id=step, **more)


def test_every_given_criterion_must_match() -> None:
    ranged = Match(SessionId("s1"), turn_id=2, first_step=3, last_step=5)
    assert matches(ranged, Request(CsId("ARS"), SessionId("s1"), 2, 4))
    assert not matches(ranged, Request(CsId("ARS"), SessionId("s1"), 2, 6))
    assert not matches(ranged, Request(CsId("ARS"), SessionId("s1"), 1, 4))
    assert not matches(ranged, Request(CsId("ARS"), SessionId("s1"), 2))
    flow = Match(flow=FlowMatch(source_prefix="10.0.0.0/8", destination_port=8900))
    assert matches(flow, Request(CsId("ARS"), source="10.1.2.3", destination_port=8900))
    assert not matches(flow, Request(CsId("ARS"), source="192.0.2.1", destination_port=8900))


def test_the_best_rule_wins_then_the_service_entry() -> None:
    table = _table(
        [service()],
        [rule("any-step"), rule("step-4", C, match={"session-id": "s1", "step-id": 4})],
    )
    assert getattr(lookup(table, _request(step=4), T0), "commitment_id", None) == "step-4"
    assert getattr(lookup(table, _request(step=5), T0), "commitment_id", None) == "any-step"
    found = lookup(table, _request("other"), T0)
    assert isinstance(found, ServiceEntry)
    assert found.csci_id == A


def test_a_flow_rule_without_session_matches_sessions_too() -> None:
    flow_rule = rule("flow", match={"flow": {"source-prefix": "10.0.0.0/8"}})
    table = _table([service()], [flow_rule])
    found = lookup(table, _request("s9", source="10.0.0.7"), T0)
    assert getattr(found, "commitment_id", None) == "flow"


def test_expired_entries_never_match() -> None:
    table = _table([service(lifetime=5)], [rule("short", lifetime=1)])
    assert getattr(lookup(table, _request(), T0 + 1), "commitment_id", None) is None
    assert isinstance(lookup(table, _request(), T0 + 1), ServiceEntry)
    assert lookup(table, _request(), T0 + 5) is None  # fallback level 3


def test_routes() -> None:
    tunnels = {"egress-1": Locator("127.0.0.1", 8901)}
    defaults = {"ARS": Locator("127.0.0.1", 8800)}
    table = _table([service()], [])
    entry = table.steering.services[CsId("ARS")]
    assert route(entry, "ARS", {}, {}).base_url == "http://192.0.2.10:8800"
    tunnelled = route(entry, "ARS", tunnels, {})
    assert (tunnelled.base_url, tunnelled.csci_id, tunnelled.egress) == (
        "http://127.0.0.1:8901",
        A,
        "egress-1",
    )
    assert route(None, "ARS", {}, defaults).base_url == "http://127.0.0.1:8800"
    refused = route(None, "ARS", {}, {})
    assert refused.base_url is None
    assert "no default route" in refused.reason


def test_the_egress_takes_local_instances_in_turn() -> None:
    entry = ServiceEntry(CsId("ARS"), local_csci_ids=(A, "sci-name", B))  # type: ignore[arg-type]
    chosen = [local_choice(entry, n).csci_id for n in range(3)]
    assert chosen == [A, B, A]
    assert local_choice(None, 0).base_url is None
    assert locator(B) is not None
