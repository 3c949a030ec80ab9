"""Session affinity, re-routing on failure and session feedback over a real ``catsctl serve``
(service-metrics-op 6.2.4, 6.2.5, 9).

The section 7.1 tables of ARS are reported over RESTCONF; a session is bound with select-service
and kept on its CSCI-ID after scenario B's delay change; the bound CSCI-ID then reports GAS 0
and the session is migrated (the policy says migrate), seen in affined-sessions, the decision
records and the NETCONF event stream. Feedback over NETCONF flags the new CSCI-ID, which the CST
shows over RESTCONF. The tables are module-wide, so the tests run in file order.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from lxml import etree

from tests.functional.netconf_client import admin_nc
from tests.functional.restconf_server import JSON, Server, admin_users

pytestmark = pytest.mark.functional

SM = "ietf-cats-service-metrics"
SM_NS = f"urn:ietf:params:xml:ns:yang:{SM}"
INGRESS = "10.0.0.1"
SCI1 = "188.3.67.3:67"
SCI3 = "188.3.67.4:69"
STREAM = "streams/json/NETCONF"
_SEQUENCE = itertools.count(1)
STARTED = datetime.now(UTC) - timedelta(seconds=1)


def seed() -> dict[str, object]:
    """The admin, the attachments of ARS, migrate on failure, and quick plausibility checks."""
    document = admin_users()
    document[f"{SM}:csci-attachments"] = {
        "attachment": [
            {"csci-id": SCI1, "egress": "188.3.67.3", "site": "SS2"},
            {"csci-id": SCI3, "egress": "188.3.67.4", "site": "SS3"},
        ]
    }
    document[f"{SM}:selection-policy"] = {
        "rerouting": {"affined-session-action": "migrate"},
        "affinity-timeout": 600,
    }
    document[f"{SM}:plausibility"] = {"min-feedback-samples": 2}
    return document


def operation(server: Server, name: str, members: Mapping[str, object]) -> dict[str, Any]:
    """POST an RPC with JSON input; its output ({} when it has none)."""
    reply = server.request(
        "POST",
        f"operations/{SM}:{name}",
        json={f"{SM}:input": members},
        headers={"Content-Type": JSON, "Accept": JSON},
    )
    assert reply.status_code in (200, 204), reply.text
    found: dict[str, Any] = reply.json()[f"{SM}:output"] if reply.status_code == 200 else {}
    return found


def report_cst(server: Server, sci3_gas: int) -> None:
    """A full report of the two ARS entries of section 7.1 (SCI3 with the GAS given)."""
    entries = [
        {"cs-id": "ARS", "csci-id": SCI1, "gas": 400, "computing-time": "5", "health": "healthy"},
        {"cs-id": "ARS", "csci-id": SCI3, "gas": sci3_gas, "computing-time": "6",
         "health": "healthy"},
    ]  # fmt: skip
    members = {
        "sequence-number": str(next(_SEQUENCE)),
        "timestamp": datetime.now(UTC).isoformat(),
        "entry": entries,
    }
    assert operation(server, "report-service-metrics", members)["accepted-entries"] == 2


def report_nst(server: Server, cf3_delay: str) -> None:
    """10.0.0.1 to CF-2 8 ms and to CF-3 as given."""
    paths = [
        {"ingress": INGRESS, "egress": "188.3.67.3", "delay": "8"},
        {"ingress": INGRESS, "egress": "188.3.67.4", "delay": cf3_delay},
    ]
    members = {
        "sequence-number": str(next(_SEQUENCE)),
        "timestamp": datetime.now(UTC).isoformat(),
        "path": paths,
    }
    assert operation(server, "report-network-metrics", members)["accepted-entries"] == 2


def select(server: Server, session: str | None = None) -> dict[str, Any]:
    """select-service for ARS at 10.0.0.1 (with session affinity when a session is given)."""
    members: dict[str, object] = {"cs-id": "ARS", "ingress": INGRESS}
    if session is not None:
        members["session-id"] = session
        members["requirement"] = {"session-affinity": True}
    return operation(server, "select-service", members)


def affined(server: Server) -> dict[str, dict[str, Any]]:
    """affined-sessions by session-id."""
    found = server.get_json(f"data/{SM}:affined-sessions").get(f"{SM}:affined-sessions", {})
    return {s["session-id"]: s for s in found.get("session", [])}


def test_affinity_keeps_a_session_on_its_csci(server: Server) -> None:
    report_cst(server, 600)
    report_nst(server, "6")
    first = select(server, "sess-a")
    assert (first["csci-id"], first["total-service-time"]) == (SCI3, "12.0")
    report_nst(server, "20")  # scenario B: SCI1 13 ms, SCI3 26 ms
    again = select(server, "sess-a")
    assert (again["csci-id"], again["decided-by"]) == (SCI3, "affinity")
    assert select(server)["csci-id"] == SCI1
    session = affined(server)["sess-a"]
    assert (session["cs-id"], session["ingress"], session["csci-id"]) == ("ARS", INGRESS, SCI3)
    assert (session["egress"], session["decision-id"], session["migrations"]) == (
        "188.3.67.4",
        first["decision-id"],
        0,
    )


def test_a_dry_run_binds_nothing(server: Server) -> None:
    members = {
        "cs-id": "ARS",
        "ingress": INGRESS,
        "session-id": "sess-dry",
        "dry-run": [None],
        "requirement": {"session-affinity": True},
    }
    assert operation(server, "select-service", members)["csci-id"] == SCI1
    assert "sess-dry" not in affined(server)


def notifications(server: Server) -> list[dict[str, Any]]:
    """The notifications of this module's server since it started (a bounded replay)."""
    stop = datetime.now(UTC) + timedelta(seconds=0.5)
    params = {"start-time": STARTED.isoformat(), "stop-time": stop.isoformat()}
    found: list[dict[str, Any]] = []
    with server.request("GET", STREAM, params=params, stream=True, timeout=20) as reply:
        assert reply.status_code == 200, reply.text
        for raw in reply.iter_lines():
            line = raw.decode()
            if line.startswith("data: "):
                found.append(json.loads(line.removeprefix("data: "))["ietf-restconf:notification"])
    return found


def test_gas_zero_migrates_the_session_and_is_notified(server: Server) -> None:
    """6.2.5: SCI3 reports GAS 0; sess-a migrates to SCI1 by a re-routing decision."""
    report_cst(server, 0)
    session = affined(server)["sess-a"]
    assert (session["csci-id"], session["egress"], session["migrations"]) == (
        SCI1,
        "188.3.67.3",
        1,
    )
    kept = server.get_json(f"data/{SM}:selection-decisions")[f"{SM}:selection-decisions"]
    record = kept["decision"][-1]
    assert (record["id"], record["trigger"], record["csci-id"]) == (
        session["decision-id"],
        "re-routing",
        SCI1,
    )
    assert record["request"] == {"cs-id": "ARS", "ingress": INGRESS, "session-id": "sess-a"}
    events = notifications(server)
    rerouted = [e[f"{SM}:session-rerouted"] for e in events if f"{SM}:session-rerouted" in e]
    assert rerouted == [
        {
            "session-id": "sess-a",
            "cs-id": "ARS",
            "previous-csci-id": SCI3,
            "action": "migrate",
            "new-csci-id": SCI1,
            "decision-id": session["decision-id"],
        }
    ]
    decided = [e[f"{SM}:selection-decision"] for e in events if f"{SM}:selection-decision" in e]
    assert [d["trigger"] for d in decided] == ["request"] * 4 + ["re-routing"]
    assert decided[-1] == {
        "decision-id": session["decision-id"],
        "trigger": "re-routing",
        "cs-id": "ARS",
        "ingress": INGRESS,
        "session-id": "sess-a",
        "result": "selected",
        "fallback-level": "none",
        "csci-id": SCI1,
        "egress": "188.3.67.3",
        "total-service-time": "13.0",
    }


@pytest.fixture(scope="module")
def manager(server: Server) -> Iterator[Any]:
    """An ncclient session as the admin."""
    session = admin_nc(server)
    try:
        yield session
    finally:
        session.close_session()


def feedback_rpc(session: str, response_time: str) -> Any:
    """A report-session-feedback element for SCI1."""
    root = etree.Element(f"{{{SM_NS}}}report-session-feedback", nsmap={None: SM_NS})
    for name, value in (
        ("cs-id", "ARS"),
        ("csci-id", SCI1),
        ("session-id", session),
        ("outcome", "slow"),
        ("response-time", response_time),
    ):
        etree.SubElement(root, f"{{{SM_NS}}}{name}").text = value
    return root


def test_feedback_over_netconf_flags_the_entry_in_the_cst(manager: Any, server: Server) -> None:
    """Section 9: SCI1 advertises 5 + 8 = 13 ms; two sessions saw 100 ms (> 13 x 1.5)."""
    for session in ("fb-1", "fb-2"):
        assert manager.dispatch(feedback_rpc(session, "100")).ok
    cst = server.get_json(f"data/{SM}:computing-service-table")[f"{SM}:computing-service-table"]
    rows = {e["csci-id"]: e for e in cst["entry"]}
    assert rows[SCI1]["observed"] == {
        "response-time": {"cur": "100.0", "mean": "100.0", "min": "100.0", "max": "100.0"},
        "feedback-count": "2",
        "sessions-steered": "2",  # the request without a session, then the migration
        "sessions-refused": "0",
        "flag": [f"{SM}:computing-time-under-reported"],
    }
    assert rows[SCI3]["observed"]["sessions-steered"] == "1"


def test_feedback_beyond_the_session_limit_is_an_rpc_error(manager: Any) -> None:
    from ncclient.operations.rpc import RPCError  # noqa: PLC0415 - ncclient only here

    with pytest.raises(RPCError) as caught:
        manager.dispatch(feedback_rpc("fb-1", "12"))
    assert (caught.value.tag, caught.value.type) == ("resource-denied", "application")
    reply = etree.fromstring(
        caught.value.xml
        if isinstance(caught.value.xml, bytes)
        else etree.tostring(caught.value.xml)
    )
    app_tag = reply.findtext("{urn:ietf:params:xml:ns:netconf:base:1.0}error-app-tag")
    assert app_tag == "feedback-limit-reached"


def test_feedback_over_restconf_on_an_unknown_entry_is_refused(server: Server) -> None:
    members = {"cs-id": "VRS", "csci-id": SCI1, "outcome": "completed"}
    reply: requests.Response = server.request(
        "POST",
        f"operations/{SM}:report-session-feedback",
        json={f"{SM}:input": members},
        headers={"Content-Type": JSON},
    )
    assert reply.status_code == 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert (error["error-tag"], error["error-path"]) == (
        "invalid-value",
        f"/{SM}:report-session-feedback/csci-id",
    )
