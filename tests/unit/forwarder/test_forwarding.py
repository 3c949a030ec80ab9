"""agents.forwarder.forwarding: affinity, counters, idempotence, expiry and tail events."""

from __future__ import annotations

from typing import Any

from agents.forwarder.forwarding import Forwarding
from agents.forwarder.table import Reach
from agents.forwarder.values import EntryKey, Kind, Request
from controller.types import CsId, ForwarderId, SessionId
from tests.unit.forwarder.helpers import A, B, rule, service, steering

T0 = 1_000_000.0


def _forwarding(*, timeout: int = 120) -> Forwarding:
    forwarding = Forwarding(Reach(), {}, {}, T0)
    forwarding.install(
        steering([service()], [], **{"flow-affinity": {"flow-timeout": timeout}}), T0
    )
    return forwarding


def _state(forwarding: Forwarding) -> dict[str, Any]:
    found: dict[str, Any] = forwarding.state()["ietf-cats-steering:steering"]
    return found


def test_a_flow_keeps_its_target_until_it_times_out() -> None:
    forwarding = _forwarding(timeout=10)
    request = Request(CsId("ARS"), SessionId("client-1"))
    assert forwarding.steer(request, T0).route.csci_id == A
    forwarding.install(
        steering([service(csci_id=B)], [], **{"flow-affinity": {"flow-timeout": 10}}), T0 + 1
    )
    assert forwarding.steer(request, T0 + 2).route.csci_id == A  # pinned
    other = Request(CsId("ARS"), SessionId("client-2"))
    assert forwarding.steer(other, T0 + 2).route.csci_id == B  # a new flow
    forwarding.sweep(T0 + 13, 0.0, None)
    assert forwarding.steer(request, T0 + 13).route.csci_id == B  # released


def test_a_failed_target_releases_the_flow() -> None:
    forwarding = _forwarding()
    request = Request(CsId("ARS"), SessionId("client-1"))
    ticket = forwarding.steer(request, T0)
    forwarding.done(ticket, 0, failed=True)
    assert _state(forwarding)["summary"]["active-flows"] == 0


def test_counters_count_flows_requests_and_bytes() -> None:
    forwarding = _forwarding()
    for _ in range(3):
        ticket = forwarding.steer(Request(CsId("ARS"), SessionId("client-1")), T0)
        forwarding.done(ticket, 100)
    counters = _state(forwarding)["service"][0]["counters"]
    assert (counters["matched-flows"], counters["matched-packets"]) == ("1", "3")
    assert counters["matched-bytes"] == "300"
    assert counters["active-flows"] == 1


def test_no_entry_and_no_default_route_is_refused() -> None:
    forwarding = _forwarding()
    ticket = forwarding.steer(Request(CsId("other")), T0)
    assert ticket.key is None
    assert ticket.route.base_url is None


def test_a_repeated_instruction_is_counted_and_changes_nothing() -> None:
    forwarding = _forwarding()
    configured = steering([service()], [rule("c1")])
    key = EntryKey(Kind.RULE, "c1")
    first, _ = forwarding.install(configured, T0, [key])
    assert first.repeated == ()
    again, _ = forwarding.install(steering([service()], [rule("c1")]), T0 + 5, [key])
    assert again.repeated == (key,)
    assert not again.accepted_changed
    counters = _state(forwarding)["rule"][0]["counters"]
    assert counters["repeated-instructions"] == "1"
    assert counters["effective-expires-at"].startswith("1970-01-12T13:47:40")  # T0 + 60


def test_expiry_gives_one_notification_per_entry() -> None:
    forwarding = _forwarding()
    forwarding.install(steering([service(lifetime=30)], [rule("c1", lifetime=2)]), T0)
    assert forwarding.sweep(T0 + 1, 0.0, None) == []
    (note,) = forwarding.sweep(T0 + 2, 0.0, None)
    body = note["ietf-cats-steering:rule-expired"]
    assert (body["entry-kind"], body["commitment-id"], body["session-id"]) == ("rule", "c1", "s1")
    assert forwarding.sweep(T0 + 3, 0.0, None) == []
    (service_note,) = forwarding.sweep(T0 + 30, 0.0, None)
    assert service_note["ietf-cats-steering:rule-expired"]["entry-kind"] == "service"
    summary = _state(forwarding)["summary"]
    assert (summary["rule-expirations"], summary["service-expirations"]) == ("1", "1")


def test_a_step_running_too_long_raises_one_step_progress() -> None:
    forwarding = _forwarding()
    monitored = rule("c1", match={"session-id": "s1", "step-id": 3})
    monitored["progress-monitoring"] = {"expected-duration": "100.000", "tail-factor": "2.00"}
    forwarding.install(steering([service()], [monitored]), T0)
    ticket = forwarding.steer(Request(CsId("ARS"), SessionId("s1"), step_id=3), T0)
    assert ticket.commitment_id == "c1"
    assert forwarding.sweep(T0, ticket.started + 0.15, None) == []
    (note,) = forwarding.sweep(T0, ticket.started + 0.25, ForwarderId("192.0.2.1"))
    body = note["ietf-cats-steering:step-progress"]
    assert (body["commitment-id"], body["step-id"], body["expected"]) == ("c1", 3, "100.000")
    assert float(body["elapsed"]) > 200
    assert forwarding.sweep(T0, ticket.started + 1, None) == []  # reported once
    forwarding.done(ticket, 0)
    assert _state(forwarding)["summary"]["tail-events"] == "1"
