"""Scenarios A-D of draft-zhangb-cats-service-metrics-op-05 section 7 over a real server.

Every scenario runs over RESTCONF (JSON) and over NETCONF (ncclient ``dispatch``, XML): a
:class:`Northbound` sends an RPC and answers its output as a plain dict of the same shape for
both (leaf values as strings, identities as ``module:name``, lists as lists), so the assertions
are shared. Each test reports the section 7.1 CST and NST itself, with sequence numbers from one
counter (both northbounds report as the admin, and the server keeps the last sequence number
per sender), so no test depends on another. The decision each test takes is then read back
from ``selection-decisions`` over the other northbound.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
import requests

from controller.types import Json
from tests.functional.netconf_client import admin_nc
from tests.functional.northbound import SM, SM_NS, Netconf, Northbound, Restconf
from tests.functional.restconf_server import JSON, Server, admin_users

pytestmark = pytest.mark.functional

INGRESS = "10.0.0.1"
CF2, CF3 = "188.3.67.3", "188.3.67.4"
SCI1, SCI3 = "188.3.67.3:67", "188.3.67.4:69"
SERVICES = {SCI1: "ARS", "188.3.67.3:68": "VRS", SCI3: "ARS", "188.3.67.4:70": "LLMS"}


#: Each test runs against RESTCONF in the server process and in two worker processes.
RESTCONF_WORKERS = (0, 2)


def seed() -> dict[str, object]:
    """The admin, the section 7.1 attachments (CSCI-ID to egress) and a rate limit that lets
    this module's reports through (all of them come from the admin, within seconds)."""
    document = admin_users()
    document[f"{SM}:csci-attachments"] = {
        "attachment": [
            {"csci-id": SCI1, "egress": CF2, "site": "SS2"},
            {"csci-id": "188.3.67.3:68", "egress": CF2, "site": "SS2"},
            {"csci-id": SCI3, "egress": CF3, "site": "SS3"},
            {"csci-id": "188.3.67.4:70", "egress": CF3, "site": "SS3"},
        ]
    }
    document[f"{SM}:update-control"] = {"rate-limit": {"max-reports": 10_000}}
    return document


class Sequence:
    """The admin's report sequence numbers: increasing across tests and northbounds."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self.last = 0

    def next(self) -> str:
        """The next number (as uint64 JSON, a string)."""
        self.last = next(self._numbers)
        return str(self.last)


SEQUENCE = Sequence()


def now() -> str:
    """The current time as yang:date-and-time."""
    return datetime.now(UTC).isoformat()


def entry(csci: str, gas: int, ct: int, price: int, health: str = "healthy") -> Json:
    """A report-service-metrics entry of the section 7.1 table (its CS-ID is the table's),
    observed by the SCI whose port ends the CSCI-ID."""
    return {
        "cs-id": SERVICES[csci],
        "csci-id": csci,
        "gas": gas,
        "computing-time": str(ct),
        "price": price,
        "health": health,
        "source": f"sci-{csci.rsplit(':', 1)[1]}",
    }


def cst_report(
    sci1: tuple[int, int] = (400, 5), sci3: tuple[int, int, str] = (600, 6, "healthy")
) -> Json:
    """report-service-metrics input: the CST of section 7.1 with SCI-1 and SCI-3 as given."""
    return {
        "sequence-number": SEQUENCE.next(),
        "timestamp": now(),
        "entry": [
            entry(SCI1, *sci1, 10, "healthy" if sci1[0] else "unhealthy"),
            entry("188.3.67.3:68", 100, 15, 20),
            entry(SCI3, sci3[0], sci3[1], 5, sci3[2]),
            entry("188.3.67.4:70", 300, 12, 15),
        ],
    }


def nst_report(cf2: Json | None = None, cf3: Json | None = None) -> Json:
    """report-network-metrics input: 10.0.0.1 to CF-2 (8 ms) and to CF-3 (6 ms) unless given."""
    return {
        "sequence-number": SEQUENCE.next(),
        "timestamp": now(),
        "path": [
            {"ingress": INGRESS, "egress": CF2, **(cf2 or {"delay": "8"})},
            {"ingress": INGRESS, "egress": CF3, **(cf3 or {"delay": "6"})},
        ],
    }


@pytest.fixture(scope="module")
def manager(server: Server) -> Iterator[Any]:
    """An ncclient session as the admin."""
    session = admin_nc(server)
    try:
        yield session
    finally:
        session.close_session()


@pytest.fixture(params=["restconf", "netconf"])
def northbounds(
    request: pytest.FixtureRequest, server: Server, manager: Any
) -> tuple[Northbound, Northbound]:
    """The northbound a test uses, and the other one (to read its decision back)."""
    both: tuple[Northbound, Northbound] = (Restconf(server), Netconf(manager))
    return both if request.param == "restconf" else (both[1], both[0])


def tables(nb: Northbound, cst: Json, nst: Json) -> None:
    """Report a CST and an NST; every entry is accepted."""
    assert nb.call("report-service-metrics", cst) == {"accepted-entries": str(len(cst["entry"]))}
    assert nb.call("report-network-metrics", nst) == {"accepted-entries": str(len(nst["path"]))}


def select_ars(pair: tuple[Northbound, Northbound], requirement: Json | None = None) -> Json:
    """select-service for ARS at 10.0.0.1; checks that the other northbound reads the same
    decision back from selection-decisions, then returns the reply."""
    nb, other = pair
    members: Json = {"cs-id": "ARS", "ingress": INGRESS}
    if requirement is not None:
        members["requirement"] = requirement
    reply = nb.call("select-service", members)
    record = other.decision(reply["decision-id"])
    assert record["request"] == {"cs-id": "ARS", "ingress": INGRESS, "requester": "admin"}
    assert record["trigger"] == "request"
    same = ("result", "fallback-level", "csci-id", "egress", "total-service-time", "candidate")
    assert {k: record.get(k) for k in same} == {k: reply.get(k) for k in same}
    return reply


def ms(value: str) -> Decimal:
    """A cats-t:milliseconds value."""
    return Decimal(value)


def by_csci(reply: Json) -> dict[str, Json]:
    """The candidates of a reply by CSCI-ID."""
    return {c["csci-id"]: c for c in reply.get("candidate", [])}


def feasible(candidate: Json, tst: int, rank: int) -> None:
    """A candidate that stayed feasible with this TST and rank."""
    assert ms(candidate["total-service-time"]) == tst
    assert candidate["rank"] == str(rank)
    assert "score" in candidate
    assert "reason" not in candidate


def excluded(candidate: Json, reason: str, detail: str) -> None:
    """A candidate excluded with this reason code and detail, without a score."""
    assert candidate["reason"] == f"{SM}:{reason}"
    assert candidate["detail"] == detail
    assert "score" not in candidate
    assert "rank" not in candidate


def test_scenario_a(northbounds: tuple[Northbound, Northbound]) -> None:
    """7.2: 188.3.67.4:69 wins with TST 6 + 6 = 12 ms over 5 + 8 = 13 ms."""
    tables(northbounds[0], cst_report(), nst_report())
    reply = select_ars(northbounds)
    assert (reply["result"], reply["fallback-level"]) == ("selected", "none")
    assert (reply["csci-id"], reply["egress"]) == (SCI3, CF3)
    assert ms(reply["computing-time"]) == 6
    assert ms(reply["network-delay"]) == 6
    assert ms(reply["total-service-time"]) == 12
    assert reply["decided-by"] == "score"
    assert [c["csci-id"] for c in reply["candidate"]] == [SCI3, SCI1]  # ARS only, in rank order
    candidates = by_csci(reply)
    feasible(candidates[SCI3], 12, 1)
    feasible(candidates[SCI1], 13, 2)
    assert candidates[SCI1]["egress"] == CF2
    assert ms(candidates[SCI1]["network-delay"]) == 8
    assert ms(candidates[SCI1]["computing-time"]) == 5


@pytest.mark.parametrize("report", ["examined", "none"])
def test_scenario_a_through_the_tst_index(
    northbounds: tuple[Northbound, Northbound], report: str
) -> None:
    """7.2 with candidate-report examined / none: the same winner from the TST index; the
    examined runner-up carries its TST, score and rank, and the reply says what it lists."""
    nb, other = northbounds
    tables(nb, cst_report(), nst_report())
    members: Json = {"cs-id": "ARS", "ingress": INGRESS, "candidate-report": report}
    reply = nb.call("select-service", members)
    assert (reply["result"], reply["csci-id"], reply["egress"]) == ("selected", SCI3, CF3)
    assert ms(reply["total-service-time"]) == 12
    assert reply["candidate-report"] == report
    record = other.decision(reply["decision-id"])
    assert record["candidate-report"] == report
    if report == "none":
        assert "candidate" not in reply
        assert "candidate" not in record
        return
    candidates = by_csci(reply)
    assert list(candidates) == [SCI3, SCI1]
    feasible(candidates[SCI3], 12, 1)
    feasible(candidates[SCI1], 13, 2)
    assert record["candidate"] == reply["candidate"]


def test_scenario_b(northbounds: tuple[Northbound, Northbound]) -> None:
    """7.3: the delay to CF-3 rises to 20 ms; 188.3.67.3:67 wins, TST 13 vs 6 + 20 = 26 ms."""
    tables(northbounds[0], cst_report(), nst_report(cf3={"delay": "20"}))
    reply = select_ars(northbounds)
    assert (reply["result"], reply["csci-id"], reply["egress"]) == ("selected", SCI1, CF2)
    assert ms(reply["total-service-time"]) == 13
    assert [c["csci-id"] for c in reply["candidate"]] == [SCI1, SCI3]
    candidates = by_csci(reply)
    feasible(candidates[SCI1], 13, 1)
    feasible(candidates[SCI3], 26, 2)
    assert ms(candidates[SCI3]["network-delay"]) == 20


def test_scenario_c_degraded_site(northbounds: tuple[Northbound, Northbound]) -> None:
    """7.4: SCI-3 DEGRADED with GAS 50 and CT 25 ms stays a candidate (GAS > 0) but loses,
    TST 25 + 6 = 31 ms against 13 ms."""
    tables(northbounds[0], cst_report(sci3=(50, 25, "degraded")), nst_report())
    reply = select_ars(northbounds)
    assert (reply["result"], reply["csci-id"]) == ("selected", SCI1)
    assert ms(reply["total-service-time"]) == 13
    candidates = by_csci(reply)
    assert set(candidates) == {SCI1, SCI3}
    feasible(candidates[SCI1], 13, 1)
    feasible(candidates[SCI3], 31, 2)
    assert (candidates[SCI3]["gas"], candidates[SCI3]["health"]) == ("50", "degraded")
    assert ms(candidates[SCI3]["computing-time"]) == 25


def test_scenario_c_withdrawn_site(northbounds: tuple[Northbound, Northbound]) -> None:
    """7.4: SCI-3 UNHEALTHY with GAS 0 is filtered out in Step 1; 188.3.67.3:67 is the only
    candidate left and is selected."""
    tables(northbounds[0], cst_report(sci3=(0, 25, "unhealthy")), nst_report())
    reply = select_ars(northbounds)
    assert (reply["result"], reply["fallback-level"]) == ("selected", "none")
    assert (reply["csci-id"], reply["decided-by"]) == (SCI1, "only-candidate")
    assert ms(reply["total-service-time"]) == 13
    candidates = by_csci(reply)
    assert set(candidates) == {SCI1, SCI3}
    feasible(candidates[SCI1], 13, 1)
    excluded(candidates[SCI3], "gas-exhausted", "GAS 0")
    assert "total-service-time" not in candidates[SCI3]  # Step 1 comes before Step 4


def test_scenario_c_every_site_withdrawn_steers_on_the_network(
    northbounds: tuple[Northbound, Northbound],
) -> None:
    """7.4 and 6.2.5: all ARS candidates at GAS 0 give Fallback Level 2, network-only: the
    egress with the minimum Network Delay (CF-3, 6 ms) selects a CSCI-ID itself."""
    tables(northbounds[0], cst_report(sci1=(0, 5), sci3=(0, 25, "unhealthy")), nst_report())
    reply = select_ars(northbounds)
    assert (reply["result"], reply["fallback-level"]) == ("egress-only", "network-only")
    assert reply["egress"] == CF3
    assert ms(reply["network-delay"]) == 6
    assert "csci-id" not in reply
    candidates = by_csci(reply)
    assert set(candidates) == {SCI1, SCI3}
    for candidate in candidates.values():
        excluded(candidate, "gas-exhausted", "GAS 0")


def test_scenario_c_every_site_withdrawn_is_service_unavailable_by_policy(
    northbounds: tuple[Northbound, Northbound],
) -> None:
    """7.4 and 6.2.5: with network-only steering disabled by policy, the same request gets
    the "Service Unavailable" indication."""
    nb = northbounds[0]
    tables(nb, cst_report(sci1=(0, 5), sci3=(0, 25, "unhealthy")), nst_report())
    nb.set_network_only(enabled=False)
    try:
        reply = select_ars(northbounds)
    finally:
        nb.set_network_only(enabled=True)
    assert reply["result"] == "service-unavailable"
    assert reply["fallback-level"] == "none"
    assert "csci-id" not in reply
    assert "egress" not in reply
    for candidate in by_csci(reply).values():
        excluded(candidate, "gas-exhausted", "GAS 0")


def test_scenario_d_price_budget_8(northbounds: tuple[Northbound, Northbound]) -> None:
    """7.5: Price <= 8 excludes 188.3.67.3:67 (Price 10) in Step 2; 188.3.67.4:69 (Price 5)
    is the only candidate, TST 6 + 6 = 12 ms."""
    tables(northbounds[0], cst_report(), nst_report())
    requirement: Json = {
        "hard-constraints": {"max-price": 8},
        "objective": [f"{SM}:minimize-latency", f"{SM}:maximize-gas"],
    }
    reply = select_ars(northbounds, requirement)
    assert (reply["result"], reply["csci-id"], reply["egress"]) == ("selected", SCI3, CF3)
    assert ms(reply["total-service-time"]) == 12
    assert reply["decided-by"] == "only-candidate"
    candidates = by_csci(reply)
    assert set(candidates) == {SCI1, SCI3}
    feasible(candidates[SCI3], 12, 1)
    excluded(candidates[SCI1], "price-above-maximum", "Price 10 > 8")
    assert candidates[SCI1]["price"] == "10"


def test_scenario_d_price_budget_12(northbounds: tuple[Northbound, Northbound]) -> None:
    """7.5: Price <= 12 keeps both; the primary objective picks 188.3.67.4:69, 12 vs 13 ms."""
    tables(northbounds[0], cst_report(), nst_report())
    requirement: Json = {
        "hard-constraints": {"max-price": 12},
        "objective": [f"{SM}:minimize-latency", f"{SM}:maximize-gas"],
    }
    reply = select_ars(northbounds, requirement)
    assert (reply["result"], reply["csci-id"]) == ("selected", SCI3)
    assert ms(reply["total-service-time"]) == 12
    assert reply["decided-by"] == "objective"
    assert reply["deciding-objective"] == f"{SM}:minimize-latency"
    assert [c["csci-id"] for c in reply["candidate"]] == [SCI3, SCI1]
    candidates = by_csci(reply)
    feasible(candidates[SCI3], 12, 1)
    feasible(candidates[SCI1], 13, 2)


@pytest.mark.parametrize(
    ("objectives", "decided_by", "deciding"),
    [
        (
            [f"{SM}:minimize-latency", f"{SM}:maximize-gas"],
            ("objective", "deciding-objective"),
            f"{SM}:maximize-gas",
        ),
        ([], ("tie-break", "deciding-tie-break"), f"{SM}:highest-gas"),
    ],
    ids=["secondary-objective", "default-tie-break"],
)
def test_scenario_d_equal_tst_goes_to_the_higher_gas(
    northbounds: tuple[Northbound, Northbound],
    objectives: list[str],
    decided_by: tuple[str, str],
    deciding: str,
) -> None:
    """7.5: a network change makes both paths equal (CF-2 at 7 ms: TST 5 + 7 = 6 + 6 = 12 ms);
    GAS 600 beats GAS 400, by the secondary objective or by the first tie-break rule."""
    tables(northbounds[0], cst_report(), nst_report(cf2={"delay": "7"}))
    requirement: Json = {"hard-constraints": {"max-price": 12}}
    if objectives:
        requirement["objective"] = objectives
    reply = select_ars(northbounds, requirement)
    assert (reply["result"], reply["csci-id"]) == ("selected", SCI3)
    assert ms(reply["total-service-time"]) == 12
    assert (reply["decided-by"], reply[decided_by[1]]) == (decided_by[0], deciding)
    candidates = by_csci(reply)
    feasible(candidates[SCI3], 12, 1)
    feasible(candidates[SCI1], 12, 2)
    assert (candidates[SCI3]["gas"], candidates[SCI1]["gas"]) == ("600", "400")


# -- report handling and the tables as YANG data (RESTCONF) ------------------------------------


def rpc(server: Server, operation: str, members: Json) -> requests.Response:
    """POST an RPC with JSON input."""
    return server.request(
        "POST",
        f"operations/{SM}:{operation}",
        json={f"{SM}:input": members},
        headers={"Content-Type": JSON},
    )


def test_cst_and_nst_are_readable(server: Server) -> None:
    restconf = Restconf(server)
    cst = cst_report()
    tables(restconf, cst, nst_report(cf3={"delay-us": 6000}))
    document = server.get_json(f"data/{SM}:computing-service-table")
    rows = {
        (e["cs-id"], e["csci-id"]): e for e in document[f"{SM}:computing-service-table"]["entry"]
    }
    assert len(rows) == 4
    sci3 = rows[("ARS", SCI3)]
    assert (sci3["gas"], Decimal(sci3["computing-time"]), sci3["price"]) == (600, Decimal(6), 5)
    assert (sci3["source"], sci3["observed-by"], sci3["site"]) == ("admin", "sci-69", "SS3")
    assert sci3["sequence"] == cst["sequence-number"]
    assert sci3["aged-out"] is False
    assert float(sci3["age"]) >= 0
    document = server.get_json(f"data/{SM}:network-service-table")
    paths = {e["egress"]: e for e in document[f"{SM}:network-service-table"]["entry"]}
    assert Decimal(paths[CF3]["network-delay"]) == 6
    assert paths[CF3]["delay-reported-in"] == "microseconds"
    assert paths[CF2]["delay-reported-in"] == "milliseconds"


def admin_sender(server: Server) -> Json:
    """The admin's entry of report-senders."""
    senders = server.get_json(f"data/{SM}:report-senders")[f"{SM}:report-senders"]["sender"]
    (admin,) = [s for s in senders if s["source"] == "admin"]
    found: Json = admin
    return found


def test_stale_sequence_is_refused_and_counted(server: Server) -> None:
    tables(Restconf(server), cst_report(), nst_report())
    last = SEQUENCE.last
    before = admin_sender(server)
    stale = cst_report()
    stale["sequence-number"] = str(last)
    reply = rpc(server, "report-service-metrics", stale)
    assert reply.status_code == 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert error["error-tag"] == "invalid-value"
    assert error["error-app-tag"] == "sequence-not-increasing"
    assert f"does not exceed {last}" in error["error-message"]
    after = admin_sender(server)
    assert after["last-sequence"] == before["last-sequence"] == str(last)
    refused = int(after["counters"]["refused-sequence"])
    assert refused == int(before["counters"]["refused-sequence"]) + 1
    assert after["counters"]["reports-accepted"] == before["counters"]["reports-accepted"]


def test_skewed_timestamp_is_refused(server: Server) -> None:
    members = cst_report()
    members["timestamp"] = "2000-01-01T00:00:00Z"
    reply = rpc(server, "report-service-metrics", members)
    assert reply.status_code == 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert error["error-app-tag"] == "clock-skew-exceeded"


def test_identity_prefixes_of_a_netconf_get_are_bound(server: Server, manager: Any) -> None:
    """RFC 7950 9.10.3: an identityref value's prefix is declared in the XML reply."""
    restconf = Restconf(server)
    tables(restconf, cst_report(), nst_report())
    members: Json = {"cs-id": "ARS", "ingress": INGRESS}
    members["requirement"] = {"hard-constraints": {"max-price": 8}}  # SCI-1 gets a reason
    reply = restconf.call("select-service", members)
    found = Netconf(manager).get_decision(reply["decision-id"])
    reasons = [e for e in found.iter() if (e.text or "").startswith("cats-sm:")]
    assert [e.text for e in reasons] == ["cats-sm:price-above-maximum"]
    assert all(e.nsmap.get("cats-sm") == SM_NS for e in reasons)


def test_numeric_identifiers_round_trip_as_json_numbers(server: Server) -> None:
    """cats-t:cs-id and csci-id are unions with uint32: RFC 7951 writes 7 as a number, and the
    C-PS answers the same way in its tables, replies and decision records."""
    report = {
        "sequence-number": SEQUENCE.next(),
        "timestamp": now(),
        "entry": [
            {
                "cs-id": 7,
                "csci-id": 42,
                "gas": 10,
                "computing-time": "4",
                "health": "healthy",
                "egress": CF3,
            }
        ],
    }
    assert rpc(server, "report-service-metrics", report).json() == {
        f"{SM}:output": {"accepted-entries": 1}
    }
    assert rpc(server, "report-network-metrics", nst_report()).status_code == 200
    table = server.get_json(f"data/{SM}:computing-service-table")[f"{SM}:computing-service-table"]
    assert [(e["cs-id"], e["csci-id"]) for e in table["entry"] if e["cs-id"] == 7] == [(7, 42)]
    reply = rpc(server, "select-service", {"cs-id": 7, "ingress": INGRESS})
    assert reply.status_code == 200, reply.text
    output = reply.json()[f"{SM}:output"]
    assert (output["result"], output.get("csci-id")) == ("selected", 42), output
    record = server.get_json(f"data/{SM}:selection-decisions/decision={output['decision-id']}")
    (decision,) = record[f"{SM}:decision"]
    assert (decision["request"]["cs-id"], decision["csci-id"]) == (7, 42)
