"""Update control of the C-PS ingest over a real ``catsctl serve`` (service-metrics-op 8, 9).

Over RESTCONF: GAS capping, price dampening, full-report removal, ownership refusal, rate
limiting (drop and throttle), soft-state aging with a one-second heartbeat, and the
notifications each causes, read back from the NETCONF stream as server-sent events (replay
between two times). Over NETCONF: a replayed report is an rpc-error. A second pair of servers
on one state directory shows that replay protection survives a restart. Each test uses its
own sender, so the per-sender sequence numbers and rate windows do not mix.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from lxml import etree

from controller.demo.launch import wait_until
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import (
    _HASH,
    ADMIN,
    JSON,
    Server,
    admin_users,
    running_server,
    write_init,
)

pytestmark = pytest.mark.functional
WAIT_S = 60.0  # the conditions hold much sooner; a loaded machine may take longer

SM = "ietf-cats-service-metrics"
SM_NS = f"urn:ietf:params:xml:ns:yang:{SM}"
SCI3 = "188.3.67.4:69"
SCI4 = "188.3.67.4:70"
CAPPED = "188.3.67.5:80"
SENDERS = (
    "csma-cap",
    "csma-price",
    "csma-full",
    "csma-owner",
    "csma-other",
    "csma-drop",
    "csma-throttle",
    "csma-age",
    "csma-nc",
)


def seed() -> dict[str, object]:
    """The admin and one user per sender; a GAS capacity; dampening on (window 60 s)."""
    document = admin_users()
    users: Any = document["ietf-system:system"]
    users["authentication"]["user"].extend({"name": name, "password": _HASH} for name in SENDERS)
    document[f"{SM}:csci-attachments"] = {
        "attachment": [{"csci-id": CAPPED, "egress": "188.3.67.5", "gas-capacity": 500}]
    }
    document[f"{SM}:update-control"] = {
        "price-dampening": {"enabled": True, "increase-threshold": "20", "window": 60}
    }
    return document


def stamp(moment: datetime | None = None) -> str:
    return (moment or datetime.now(UTC)).isoformat()


class Sender:
    """One authenticated C-SMA with its own sequence numbers."""

    def __init__(self, server: Server, name: str) -> None:
        self.server = server
        self.name = name
        self.sequence = 0

    def report(self, *entries: dict[str, object], **members: object) -> requests.Response:
        self.sequence += 1
        body: dict[str, object] = {"sequence-number": str(self.sequence), "timestamp": stamp()}
        body.update(members)
        if entries:
            body["entry"] = list(entries)
        return self.server.request(
            "POST",
            f"operations/{SM}:report-service-metrics",
            json={f"{SM}:input": body},
            headers={"Content-Type": JSON},
            auth=(self.name, ADMIN[1]),
        )


def entry(csci: str, gas: int = 100, **extra: object) -> dict[str, object]:
    return {
        "cs-id": "ARS",
        "csci-id": csci,
        "gas": gas,
        "computing-time": "5",
        "health": "healthy",
        **extra,
    }


def output(reply: requests.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()[f"{SM}:output"]
    return found


def cst(server: Server) -> dict[str, dict[str, Any]]:
    found = server.get_json(f"data/{SM}:computing-service-table")
    table = found.get(f"{SM}:computing-service-table", {})  # no entries: no container
    return {e["csci-id"]: e for e in table.get("entry", [])}


def counters(server: Server, name: str) -> dict[str, str]:
    senders = server.get_json(f"data/{SM}:report-senders")[f"{SM}:report-senders"]["sender"]
    found: dict[str, str] = next(s for s in senders if s["source"] == name)["counters"]
    return found


def update_control(server: Server, values: dict[str, object]) -> None:
    """Replace update-control in running."""
    reply = server.request(
        "PUT",
        f"data/{SM}:update-control",
        json={f"{SM}:update-control": values},
        headers={"Content-Type": JSON},
    )
    assert reply.status_code in (201, 204), reply.text


def notifications(server: Server, since: datetime, name: str) -> list[dict[str, Any]]:
    """The ``name`` notifications of the module published since ``since`` (SSE replay)."""
    params = {"start-time": stamp(since), "stop-time": stamp()}
    found: list[dict[str, Any]] = []
    with server.request("GET", "streams/json/NETCONF", params=params, stream=True) as reply:
        assert reply.status_code == 200, reply.text
        for raw in reply.iter_lines():
            line = raw.decode()
            if line.startswith("data: "):
                body = json.loads(line.removeprefix("data: "))["ietf-restconf:notification"]
                if f"{SM}:{name}" in body:
                    found.append(body[f"{SM}:{name}"])
    return found


def test_gas_above_capacity_is_capped_and_flagged(server: Server) -> None:
    since = datetime.now(UTC)
    sender = Sender(server, "csma-cap")
    assert output(sender.report(entry(CAPPED, gas=900))) == {"accepted-entries": 1}
    row = cst(server)[CAPPED]
    assert (row["gas"], row["reported-gas"]) == (500, 500)
    assert row["observed"]["flag"] == [f"{SM}:gas-above-capacity"]
    assert counters(server, "csma-cap")["gas-capped"] == "1"
    (added,) = [n for n in notifications(server, since, "cst-entry-changed")]
    assert added == {
        "cs-id": "ARS",
        "csci-id": CAPPED,
        "change": "added",
        "gas": 500,
        "computing-time": "5.0",
        "health": "healthy",
        "flag": [f"{SM}:gas-above-capacity"],
    }


def test_price_increase_is_dampened(server: Server) -> None:
    sender = Sender(server, "csma-price")
    output(sender.report(entry(SCI3, price=10)))
    reply = output(sender.report(entry(SCI3, price=20)))
    assert reply == {"accepted-entries": 1, "dampened-entries": 1}
    row = cst(server)[SCI3]
    assert row["price"] == 10
    pending = row["pending-price-increase"]
    assert pending["price"] == 20
    assert datetime.fromisoformat(pending["effective-at"]) > datetime.now(UTC) + timedelta(
        seconds=50
    )
    assert counters(server, "csma-price")["price-increases-dampened"] == "1"


def test_full_report_removes_the_unlisted_entries(server: Server) -> None:
    since = datetime.now(UTC)
    sender = Sender(server, "csma-full")
    output(sender.report(entry("10.1.1.1:1"), entry("10.1.1.1:2"), site="S1"))
    assert output(sender.report(entry("10.1.1.1:2"), site="S1", **{"report-type": "full"})) == {
        "accepted-entries": 1
    }
    rows = cst(server)
    assert "10.1.1.1:1" not in rows
    assert rows["10.1.1.1:2"]["source"] == "csma-full"
    changes = [
        (n["csci-id"], n["change"]) for n in notifications(server, since, "cst-entry-changed")
    ]
    assert changes == [("10.1.1.1:1", "added"), ("10.1.1.1:2", "added"), ("10.1.1.1:1", "removed")]


def test_entry_of_another_sender_is_refused(server: Server) -> None:
    since = datetime.now(UTC)
    owner, other = Sender(server, "csma-owner"), Sender(server, "csma-other")
    output(owner.report(entry("10.2.2.2:1", gas=10)))
    reply = output(other.report(entry("10.2.2.2:1", gas=999), entry("10.2.2.2:2")))
    assert reply["accepted-entries"] == 1
    (refused,) = reply["refused-entry"]
    assert (refused["csci-id"], refused["reason"]) == (
        "10.2.2.2:1",
        f"{SM}:entry-owned-by-other-sender",
    )
    assert refused["detail"].startswith("held for csma-owner until ")
    row = cst(server)["10.2.2.2:1"]
    assert (row["gas"], row["source"]) == (10, "csma-owner")
    assert counters(server, "csma-other")["refused-not-authorized"] == "1"
    (event,) = notifications(server, since, "report-refused")
    assert event == {
        "sender": "csma-other",
        "operation": "report-service-metrics",
        "sequence-number": "1",
        "reason": f"{SM}:entry-owned-by-other-sender",
        "entries": 1,
        "detail": "1 entries refused",
    }


DAMPENING: dict[str, object] = {
    "price-dampening": {"enabled": True, "increase-threshold": "20", "window": 60}
}


def test_rate_limit_drop_refuses_with_resource_denied(server: Server) -> None:
    update_control(server, {**DAMPENING, "rate-limit": {"max-reports": 2, "interval": 60}})
    since = datetime.now(UTC)
    sender = Sender(server, "csma-drop")
    output(sender.report(entry("10.3.3.3:1", gas=1)))
    output(sender.report(entry("10.3.3.3:1", gas=2)))
    reply = sender.report(entry("10.3.3.3:1", gas=300))
    assert reply.status_code == 409, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert (error["error-type"], error["error-tag"], error["error-app-tag"]) == (
        "application",
        "resource-denied",
        "rate-limited",
    )
    assert error["error-path"] == f"/{SM}:report-service-metrics"
    assert cst(server)["10.3.3.3:1"]["gas"] == 2
    assert counters(server, "csma-drop")["rate-limited-dropped"] == "1"
    (event,) = notifications(server, since, "report-refused")
    assert (event["sender"], event["reason"], event["sequence-number"], event["entries"]) == (
        "csma-drop",
        f"{SM}:rate-limited",
        "3",
        1,
    )


def test_rate_limit_throttle_applies_at_the_end_of_the_interval(server: Server) -> None:
    update_control(
        server,
        {**DAMPENING, "rate-limit": {"max-reports": 1, "interval": 1, "action": "throttle"}},
    )
    sender = Sender(server, "csma-throttle")
    output(sender.report(entry("10.4.4.4:1", gas=100)))
    reply = output(sender.report(entry("10.4.4.4:1", gas=400)))
    if "deferred-until" not in reply:  # the one-second window ended between the two reports
        reply = output(sender.report(entry("10.4.4.4:1", gas=400)))
    deferred = datetime.fromisoformat(reply["deferred-until"])
    assert reply["accepted-entries"] == 1
    assert cst(server)["10.4.4.4:1"]["gas"] == 100
    assert counters(server, "csma-throttle")["rate-limited-throttled"] == "1"
    assert deferred > datetime.now(UTC) - timedelta(seconds=5)  # the end of this interval
    wait_until(
        "the held values applied at the end of the interval",
        lambda: cst(server)["10.4.4.4:1"]["gas"] == 400,
        timeout=WAIT_S,
        seen=lambda: cst(server)["10.4.4.4:1"],
    )
    update_control(server, DAMPENING)


def test_entries_age_out_without_refresh(server: Server) -> None:
    update_control(
        server,
        {**DAMPENING, "heartbeat-interval": 1, "expiry-multiplier": 1, "network-entry-lifetime": 1},
    )
    since = datetime.now(UTC)
    sender = Sender(server, "csma-age")
    output(sender.report(entry("10.5.5.5:1", gas=70)))
    path = {"ingress": "10.0.0.9", "egress": "10.5.5.5", "delay-us": 1500}
    sender.sequence += 1  # one sequence space per sender, whatever it reports
    members = {"sequence-number": str(sender.sequence), "timestamp": stamp(), "path": [path]}
    reply = server.request(
        "POST",
        f"operations/{SM}:report-network-metrics",
        json={f"{SM}:input": members},
        headers={"Content-Type": JSON},
        auth=("csma-age", ADMIN[1]),
    )
    assert output(reply) == {"accepted-entries": 1}
    row = wait_until(
        "the entry aged out",
        lambda: (found := cst(server)["10.5.5.5:1"]).get("aged-out") and found,
        timeout=WAIT_S,
        seen=lambda: cst(server)["10.5.5.5:1"],
    )
    assert (row["aged-out"], row["gas"], row["reported-gas"]) == (True, 0, 70)

    def changes() -> list[str]:
        found = notifications(server, since, "cst-entry-changed")
        return [n["change"] for n in found if n["csci-id"] == "10.5.5.5:1"]

    # the notification follows the state it announces (published once the sweep's lock is
    # released): wait for it rather than read the log at once
    wait_until("the aged-out notification", lambda: len(changes()) >= 2, timeout=WAIT_S)
    assert changes() == ["added", "aged-out"]
    stale = "the stale notification"
    paths = wait_until(
        stale,
        lambda: (p := notifications(server, since, "nst-entry-changed"))[1:] and p,
        timeout=WAIT_S,
    )
    assert paths == [
        {"ingress": "10.0.0.9", "egress": "10.5.5.5", "change": "added", "network-delay": "1.5"},
        {"ingress": "10.0.0.9", "egress": "10.5.5.5", "change": "stale", "network-delay": "1.5"},
    ]
    update_control(server, DAMPENING)


def rpc(name: str, members: dict[str, object]) -> Any:
    root = etree.Element(f"{{{SM_NS}}}{name}", nsmap={None: SM_NS})
    for leaf, value in members.items():
        etree.SubElement(root, f"{{{SM_NS}}}{leaf}").text = str(value)
    return root


def test_replayed_report_over_netconf_is_an_rpc_error(server: Server) -> None:
    from ncclient.operations.rpc import RPCError  # noqa: PLC0415 - ncclient only here

    with connect_nc(server.netconf_port, "csma-nc", ADMIN[1]) as manager:
        report = {"sequence-number": 7, "timestamp": stamp(), "report-type": "heartbeat"}
        assert manager.dispatch(rpc("report-service-metrics", report)).ok
        with pytest.raises(RPCError) as caught:
            manager.dispatch(rpc("report-service-metrics", report))
    assert (caught.value.type, caught.value.tag) == ("application", "invalid-value")
    raw = caught.value.xml
    error = raw if not isinstance(raw, (bytes, str)) else etree.fromstring(raw)
    nc = "{urn:ietf:params:xml:ns:netconf:base:1.0}"
    assert error.findtext(f"{nc}error-app-tag") == "sequence-not-increasing"
    assert error.findtext(f"{nc}error-path") == f"/{SM}:report-service-metrics/{SM}:sequence-number"


def test_replay_after_a_restart_is_refused(tmp_path: Path) -> None:
    init = write_init(tmp_path, admin_users())
    state = tmp_path / "state"
    with running_server(state, init) as first:
        output(Sender(first, "admin").report(entry(SCI3)))
    with running_server(state) as second:
        replayed = Sender(second, "admin").report(entry(SCI3, gas=999))
        assert replayed.status_code == 400, replayed.text
        (error,) = replayed.json()["ietf-restconf:errors"]["error"]
        assert error["error-app-tag"] == "sequence-not-increasing"
        senders = second.get_json(f"data/{SM}:report-senders")[f"{SM}:report-senders"]
        (admin,) = senders["sender"]
        assert (admin["last-sequence"], admin["counters"]["reports-accepted"]) == ("1", "1")
        assert admin["counters"]["refused-sequence"] == "1"
        assert SCI3 not in cst(second)  # the tables are soft state; the ledger is not
