"""The C-PS service-metrics application over a real ``catsctl serve`` (issue 5).

Scenario A of draft-zhangb-cats-service-metrics-op-05 section 7.2 end to end over RESTCONF: the
section 7.1 CST and NST reported with report-service-metrics and report-network-metrics, then
select-service for ARS at 10.0.0.1 (TST 12 vs 13). Scenarios B (7.3) and D (7.5) over NETCONF
with ncclient's ``dispatch``. The tables are module-wide, so the tests run in file order.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
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


def seed() -> dict[str, object]:
    """The admin and the section 7.1 attachments (the CSCI-ID egresses)."""
    document = admin_users()
    document[f"{SM}:csci-attachments"] = {
        "attachment": [
            {"csci-id": SCI1, "egress": "188.3.67.3", "site": "SS2"},
            {"csci-id": "188.3.67.3:68", "egress": "188.3.67.3", "site": "SS2"},
            {"csci-id": SCI3, "egress": "188.3.67.4", "site": "SS3"},
            {"csci-id": "188.3.67.4:70", "egress": "188.3.67.4", "site": "SS3"},
        ]
    }
    return document


def now() -> str:
    """The current time as yang:date-and-time."""
    return datetime.now(UTC).isoformat()


def entry(cs: str, csci: str, gas: int, ct: str, price: int) -> dict[str, object]:
    """A report-service-metrics entry."""
    return {
        "cs-id": cs,
        "csci-id": csci,
        "gas": gas,
        "computing-time": ct,
        "price": price,
        "health": "healthy",
        "source": f"sci-{csci.rsplit(':', 1)[1]}",
    }


def operation(server: Server, name: str, members: dict[str, object]) -> requests.Response:
    """POST an RPC with JSON input."""
    body = {f"{SM}:input": members}
    return server.request(
        "POST", f"operations/{SM}:{name}", json=body, headers={"Content-Type": JSON}
    )


def output(reply: requests.Response) -> dict[str, Any]:
    """The output of a successful RPC."""
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()[f"{SM}:output"]
    return found


def section7_cst(sequence: int) -> dict[str, object]:
    """report-service-metrics input with the CST of section 7.1."""
    return {
        "sequence-number": str(sequence),
        "timestamp": now(),
        "entry": [
            entry("ARS", SCI1, 400, "5", 10),
            entry("VRS", "188.3.67.3:68", 100, "15", 20),
            entry("ARS", SCI3, 600, "6", 5),
            entry("LLMS", "188.3.67.4:70", 300, "12", 15),
        ],
    }


def nst_report(sequence: int, cf3: dict[str, object]) -> dict[str, object]:
    """report-network-metrics input: 10.0.0.1 to CF-2 8 ms and to CF-3 as given."""
    return {
        "sequence-number": str(sequence),
        "timestamp": now(),
        "path": [
            {"ingress": INGRESS, "egress": "188.3.67.3", "delay": "8"},
            {"ingress": INGRESS, "egress": "188.3.67.4", **cf3},
        ],
    }


def by_csci(candidates: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The candidates of a reply by CSCI-ID."""
    return {c["csci-id"]: c for c in candidates}


def test_scenario_a_over_restconf(server: Server) -> None:
    """7.2: 188.3.67.4:69 wins with TST 6+6 = 12 ms over 5+8 = 13 ms."""
    assert output(operation(server, "report-service-metrics", section7_cst(1))) == {
        "accepted-entries": 4
    }
    reply = operation(server, "report-network-metrics", nst_report(2, {"delay-us": 6000}))
    assert output(reply) == {"accepted-entries": 2}
    chosen = output(operation(server, "select-service", {"cs-id": "ARS", "ingress": INGRESS}))
    assert chosen["result"] == "selected"
    assert chosen["fallback-level"] == "none"
    assert chosen["csci-id"] == SCI3
    assert chosen["egress"] == "188.3.67.4"
    assert Decimal(chosen["total-service-time"]) == 12.000
    candidates = by_csci(chosen["candidate"])
    assert set(candidates) == {SCI1, SCI3}
    assert Decimal(candidates[SCI3]["total-service-time"]) == 12.000
    assert candidates[SCI3]["rank"] == 1
    assert "score" in candidates[SCI3]
    assert Decimal(candidates[SCI1]["total-service-time"]) == 13.000
    assert candidates[SCI1]["rank"] == 2


def test_cst_nst_and_decision_are_readable(server: Server) -> None:
    cst = server.get_json(f"data/{SM}:computing-service-table")[f"{SM}:computing-service-table"]
    rows = {(e["cs-id"], e["csci-id"]): e for e in cst["entry"]}
    assert len(rows) == 4
    sci3 = rows[("ARS", SCI3)]
    assert (sci3["gas"], Decimal(sci3["computing-time"]), sci3["price"]) == (600, Decimal(6), 5)
    assert sci3["source"] == "admin"
    assert sci3["observed-by"] == "sci-69"
    assert sci3["sequence"] == "1"
    assert sci3["site"] == "SS3"
    assert sci3["aged-out"] is False
    assert float(sci3["age"]) >= 0
    nst = server.get_json(f"data/{SM}:network-service-table")[f"{SM}:network-service-table"]
    paths = {e["egress"]: e for e in nst["entry"]}
    assert Decimal(paths["188.3.67.4"]["network-delay"]) == 6.000
    assert paths["188.3.67.4"]["delay-reported-in"] == "microseconds"
    assert paths["188.3.67.3"]["delay-reported-in"] == "milliseconds"
    kept = server.get_json(f"data/{SM}:selection-decisions")[f"{SM}:selection-decisions"]
    assert int(kept["statistics"]["decisions"]) >= 1
    first = kept["decision"][0]
    assert first["request"] == {"cs-id": "ARS", "ingress": INGRESS, "requester": "admin"}
    assert first["csci-id"] == SCI3


def test_stale_sequence_is_refused_and_counted(server: Server) -> None:
    reply = operation(server, "report-service-metrics", section7_cst(1))
    assert reply.status_code == 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert error["error-tag"] == "invalid-value"
    assert error["error-app-tag"] == "sequence-not-increasing"
    assert "does not exceed 2" in error["error-message"]
    senders = server.get_json(f"data/{SM}:report-senders")[f"{SM}:report-senders"]
    (admin,) = senders["sender"]
    assert admin["source"] == "admin"
    assert admin["last-sequence"] == "2"
    assert admin["counters"]["refused-sequence"] == "1"
    assert admin["counters"]["reports-accepted"] == "2"
    assert admin["entries"] == 6


def test_skewed_timestamp_is_refused(server: Server) -> None:
    members = section7_cst(3)
    members["timestamp"] = "2000-01-01T00:00:00Z"
    reply = operation(server, "report-service-metrics", members)
    assert reply.status_code == 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert error["error-app-tag"] == "clock-skew-exceeded"


@pytest.fixture(scope="module")
def manager(server: Server) -> Iterator[Any]:
    """An ncclient session as the admin."""
    session = admin_nc(server)
    try:
        yield session
    finally:
        session.close_session()


def rpc(name: str, members: dict[str, object]) -> Any:
    """An RPC element of ietf-cats-service-metrics from nested members (lists as lists)."""
    root = etree.Element(f"{{{SM_NS}}}{name}", nsmap={None: SM_NS, "sm": SM_NS})
    _fill(root, members)
    return root


def _fill(parent: Any, members: dict[str, object]) -> None:
    for name, value in members.items():
        for item in value if isinstance(value, list) else [value]:
            child = etree.SubElement(parent, f"{{{SM_NS}}}{name}")
            if isinstance(item, dict):
                _fill(child, item)
            else:
                child.text = str(item)


def select_over_netconf(manager: Any, requirement: dict[str, object] | None = None) -> Any:
    """select-service for ARS at 10.0.0.1 through ncclient's dispatch; the rpc-reply."""
    members: dict[str, object] = {"cs-id": "ARS", "ingress": INGRESS}
    if requirement is not None:
        members["requirement"] = requirement
    reply = manager.dispatch(rpc("select-service", members))
    assert reply.ok, reply.xml
    return etree.fromstring(reply.xml.encode())


def candidates_of(reply: Any) -> dict[str, Any]:
    """The candidate elements of a select-service reply by CSCI-ID."""
    found = reply.findall(f".//{{{SM_NS}}}candidate")
    return {c.findtext(f"{{{SM_NS}}}csci-id"): c for c in found}


def test_scenario_b_over_netconf(manager: Any) -> None:
    """7.3: the delay to CF-3 rises to 20 ms; 188.3.67.3:67 wins, TST 13 vs 26."""
    report = nst_report(4, {"delay": "20"})
    answer = manager.dispatch(rpc("report-network-metrics", report))
    assert answer.ok, answer.xml
    reply = select_over_netconf(manager)
    assert reply.findtext(f"{{{SM_NS}}}csci-id") == SCI1
    assert Decimal(reply.findtext(f"{{{SM_NS}}}total-service-time") or "") == 13.0
    candidates = candidates_of(reply)
    assert Decimal(candidates[SCI3].findtext(f"{{{SM_NS}}}total-service-time") or "") == 26.0


def test_scenario_d_over_netconf(manager: Any) -> None:
    """7.5: max-price 8 excludes 188.3.67.3:67 (price 10); 188.3.67.4:69 (price 5) wins."""
    report = nst_report(5, {"delay": "6"})
    assert manager.dispatch(rpc("report-network-metrics", report)).ok
    requirement: dict[str, object] = {
        "hard-constraints": {"max-price": 8},
        "objective": ["sm:minimize-latency", "sm:maximize-gas"],  # prefix of the rpc element
    }
    reply = select_over_netconf(manager, requirement)
    assert reply.findtext(f"{{{SM_NS}}}csci-id") == SCI3
    assert reply.findtext(f"{{{SM_NS}}}egress") == "188.3.67.4"
    excluded = candidates_of(reply)[SCI1]
    reason = excluded.findtext(f"{{{SM_NS}}}reason") or ""
    assert reason.endswith(":price-above-maximum")
    assert excluded.find(f"{{{SM_NS}}}score") is None
