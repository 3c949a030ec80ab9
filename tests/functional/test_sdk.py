"""controller.sdk against a real ``catsctl serve``, over RESTCONF and over NETCONF (issue 19).

Round trips: an SDK object is encoded (RFC 7951 JSON for RESTCONF, XML for NETCONF), validated
by libyang, written to the server, read back over the other protocol and compared with the
object it started from. Errors come back as one SdkError with the error-tag, app-tag and path.
The examples of yang/examples/ go through the SDK to the server too.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import paramiko
import pytest

from controller.model import Encoding, InstanceKind, Schema
from controller.sdk import Controller, SdkError, bulk, objects
from controller.sdk.objects import SM, Binding
from tests.conftest import EXAMPLES_DIR
from tests.functional.restconf_server import ADMIN, Server, admin_users, free_port, seeded_server

pytestmark = pytest.mark.functional

SCI1, SCI3 = "188.3.67.3:67", "188.3.67.4:69"
CF2, CF3 = "188.3.67.3", "188.3.67.4"
SEQUENCE = itertools.count(1)
KEY = paramiko.ECDSAKey.generate()  # the key of the user "operator" (no password)


def seed() -> dict[str, object]:
    """The admin, two attachments of service-metrics-op 7.1, a rate limit for the tests."""
    document = admin_users()
    document[f"{SM}:csci-attachments"] = {
        "attachment": [
            {"csci-id": SCI1, "egress": CF2, "site": "SS2"},
            {"csci-id": SCI3, "egress": CF3, "site": "SS3"},
        ]
    }
    document[f"{SM}:update-control"] = {"rate-limit": {"max-reports": 10_000}}
    users: Any = document["ietf-system:system"]
    users["authentication"]["user"].append(
        {
            "name": "operator",
            "authorized-key": [
                {"name": "sdk", "algorithm": KEY.get_name(), "key-data": KEY.get_base64()}
            ],
        }
    )
    return document


def connect(server: Server, protocol: str) -> Controller:
    """The SDK's client over ``protocol``, as the admin."""
    if protocol == "restconf":
        return Controller.restconf(f"{server.root}/restconf", *ADMIN)
    return Controller.netconf("127.0.0.1", server.netconf_port, ADMIN[0], password=ADMIN[1])


@pytest.fixture(params=["restconf", "netconf"])
def protocol(request: pytest.FixtureRequest) -> str:
    """Each protocol in turn."""
    return str(request.param)


@pytest.fixture
def cps(server: Server, protocol: str) -> Iterator[Controller]:
    """The client under test."""
    with connect(server, protocol) as client:
        yield client


@pytest.fixture
def other(server: Server, protocol: str) -> Iterator[Controller]:
    """A client over the other protocol, to read back what ``cps`` wrote."""
    with connect(server, "netconf" if protocol == "restconf" else "restconf") as client:
        yield client


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def policy() -> Binding:
    """A selection policy as an operator scripts it: ARS capped at price 8, by latency."""
    built = objects.top(SM, "selection-policy")
    built.default_requirement.objective.append("minimize-latency")
    built.default_requirement.tie_break.append("ietf-cats-service-metrics:highest-gas")
    ars = built.service_policy.add("ARS")
    ars.requirement.hard_constraints.max_price = 8
    return built


def report(sci1_price: int = 10) -> Binding:
    """report-service-metrics input built as objects: SCI-1 and SCI-3 of 7.1."""
    built = objects.operation(SM, "report-service-metrics").input
    built.sequence_number = next(SEQUENCE)
    built.timestamp = now()
    for csci, gas, ct, price in ((SCI1, 400, "5", sci1_price), (SCI3, 600, "6", 5)):
        entry = built.entry.add(cs_id="ARS", csci_id=csci)
        entry.gas, entry.computing_time, entry.price, entry.health = gas, ct, price, "healthy"
    return built


def test_policy_round_trip_through_libyang_the_server_and_the_other_protocol(
    cps: Controller, other: Controller, schema: Schema
) -> None:
    written = policy()
    schema.validate(objects.to_json(written), InstanceKind.CONFIG)
    schema.validate(objects.xml_text(written), InstanceKind.CONFIG, Encoding.XML)
    cps.set_selection_policy(written, replace=True)
    assert objects.equal(other.selection_policy(), written)
    assert objects.equal(cps.selection_policy(), written)


def test_a_list_entry_is_edited_and_deleted_where_it_sits(
    cps: Controller, other: Controller
) -> None:
    """Any node, not only a top-level container: one service policy replaced, then deleted."""
    cps.set_selection_policy(policy(), replace=True)
    edited = objects.top(SM, "selection-policy").service_policy.add("VRS")
    edited.description = "video"
    edited.requirement.hard_constraints.max_price = 20
    cps.edit(edited, replace=True)
    read = other.selection_policy()
    assert objects.equal(read.service_policy["VRS"], edited)
    assert read.service_policy["ARS"].requirement.hard_constraints.max_price == 8
    bound = objects.top(SM, "selection-policy").default_requirement.weighted_objective
    entry = bound.normalization.add("ietf-cats-service-metrics:price")
    entry.min_, entry.max_ = "1", "20"
    cps.edit(entry)  # merged with its ancestors; an identityref key
    assert "price" in other.selection_policy().default_requirement.weighted_objective.normalization
    cps.delete(entry)
    cps.delete(other.selection_policy().service_policy["VRS"])
    after = other.selection_policy()
    assert list(after.service_policy.keys()) == ["ARS"]
    assert len(after.default_requirement.weighted_objective.normalization) == 0


def test_report_then_select_and_read_the_tables(cps: Controller, other: Controller) -> None:
    cps.set_selection_policy(policy(), replace=True)
    sent = report()
    output = cps.report_service_metrics(sent)
    assert len(output.refused_entry) == 0
    network = other.new_input(SM, "report-network-metrics")
    network.sequence_number, network.timestamp = next(SEQUENCE), now()
    for egress, delay in ((CF2, "8"), (CF3, "6")):
        network.path.add(ingress="10.0.0.1", egress=egress).delay = delay
    assert other.report_network_metrics(network).accepted_entries == 2
    decision = cps.select_service("ARS", "10.0.0.1", candidate_report="all")
    assert decision.csci_id == SCI3  # SCI-1 costs 10 > max-price 8
    reasons = {c.csci_id: str(c.reason) for c in decision.candidate.values()}
    assert reasons[SCI1] == "price-above-maximum", reasons
    table = other.computing_service_table()
    kept = {(e.cs_id, e.csci_id): int(e.gas) for e in table.entry.values()}
    assert kept == {("ARS", SCI1): 400, ("ARS", SCI3): 600}


def test_the_bulk_path_reports_a_thousand_entries_in_one_call(
    tmp_path: Path, protocol: str
) -> None:
    """On a server of its own: a CST of 1,000 entries is read back as members, not objects."""
    entries = [
        bulk.cst_entry(f"svc-{n}", SCI3 if n % 2 else SCI1, gas=n, computing_time=f"{n}.5")
        for n in range(1000)
    ]
    with seeded_server(tmp_path, seed()) as own, connect(own, protocol) as cps:
        output = cps.report_service_metrics_bulk(bulk.service_report(1, entries))
        assert output.get("refused-entry", []) == []
        table = cps.get_members(SM, "computing-service-table")
    kept = {(e["cs-id"], e["csci-id"]): (e["gas"], e["computing-time"]) for e in table["entry"]}
    assert len(kept) == 1000
    assert kept["svc-7", SCI3] == (7, "7.5")


def test_a_refused_edit_names_tag_app_tag_and_path_and_changes_nothing(
    cps: Controller, other: Controller
) -> None:
    """A must the bindings do not check (normalization max >= min): the server's libyang
    refuses it with operation-failed, its error-app-tag and the path of ``max``."""
    before = other.get_members(SM, "selection-policy", config_only=True)
    bad = objects.top(SM, "selection-policy")
    weighted = bad.default_requirement.weighted_objective
    bound = weighted.normalization.add("ietf-cats-service-metrics:price")
    bound.min_, bound.max_ = "10", "2"
    with pytest.raises(SdkError) as refused:
        cps.set_selection_policy(bad)
    assert refused.value.tag == "operation-failed"
    assert refused.value.app_tag == "normalization-bounds"
    assert refused.value.path is not None
    assert "normalization" in refused.value.path
    assert refused.value.path.rsplit("/", 1)[1] in {"max", f"{SM}:max"}
    assert other.get_members(SM, "selection-policy", config_only=True) == before


def test_a_refused_rpc_names_tag_app_tag_and_path(cps: Controller) -> None:
    """A heartbeat report with entries breaks a must of the RPC input."""
    heartbeat = report()
    heartbeat.report_type = "heartbeat"
    with pytest.raises(SdkError) as refused:
        cps.report_service_metrics(heartbeat)
    assert refused.value.app_tag == "heartbeat-with-entries"
    assert refused.value.tag == "operation-failed"
    assert "report-type" in (refused.value.path or "")


def test_a_bulk_report_refused_by_the_schema_says_where(cps: Controller) -> None:
    members = bulk.service_report(
        next(SEQUENCE), [bulk.cst_entry("ARS", SCI1, gas=-1, computing_time=5)]
    )
    with pytest.raises(SdkError) as refused:
        cps.report_service_metrics_bulk(members)
    assert refused.value.tag == "invalid-value"
    assert "gas" in (refused.value.path or refused.value.items[0].message)


def test_a_server_out_of_reach_is_a_transport_error() -> None:
    port = free_port()
    restconf = Controller.restconf(f"http://127.0.0.1:{port}/restconf", *ADMIN, timeout=5)
    with pytest.raises(SdkError) as refused:
        restconf.selection_policy()
    assert refused.value.items[0].type.value == "transport"
    with pytest.raises(SdkError) as refused:
        Controller.netconf("127.0.0.1", port, ADMIN[0], password=ADMIN[1], timeout=5)
    assert refused.value.items[0].type.value == "transport"


def test_netconf_with_a_key_file(server: Server, tmp_path: Path) -> None:
    key_file = tmp_path / "id_ecdsa"
    KEY.write_private_key_file(str(key_file))
    with Controller.netconf("127.0.0.1", server.netconf_port, "operator", key=str(key_file)) as cps:
        assert cps.get_members(SM, "csci-attachments", config_only=True)["attachment"]


def test_wrong_credentials_are_refused(server: Server) -> None:
    restconf = Controller.restconf(f"{server.root}/restconf", ADMIN[0], "wrong")
    with pytest.raises(SdkError) as refused:
        restconf.selection_policy()
    assert refused.value.status == 401
    with pytest.raises(SdkError) as refused:
        Controller.netconf("127.0.0.1", server.netconf_port, ADMIN[0], password="wrong")
    assert "Authentication failed" in str(refused.value)


def test_the_candidate_with_a_confirmed_commit(server: Server) -> None:
    """NETCONF: edit the candidate, confirmed commit, the confirming commit; then a discard."""
    with connect(server, "netconf") as cps, connect(server, "restconf") as other:
        written = policy()
        written.service_policy.add("candidate-test").description = "via the candidate"
        cps.set_selection_policy(written, replace=True, candidate=True)
        assert not objects.equal(other.selection_policy(), written)
        cps.commit(confirm_timeout=60)
        cps.commit()
        assert objects.equal(other.selection_policy(), written)
        cps.set_selection_policy(policy(), replace=True, candidate=True)
        cps.discard_changes()
        assert objects.equal(other.selection_policy(), written)
        with pytest.raises(SdkError) as refused:
            other.commit()
        assert refused.value.tag == "operation-not-supported"


#: What the C-PS answers to each example RPC once it is current: the output's members that
#: must be there, or the error-tag of its refusal (report-sci-metrics is the C-SMA's RPC).
EXAMPLE_OUTCOMES = {
    "report-service-metrics.rpc.json": "accepted-entries",
    "scenario-d-select.rpc.json": "result",
    "step30-descriptor.rpc.json": "evaluation",
    "sci-report.rpc.json": "operation-not-supported",
}


def current(members: dict[str, object]) -> dict[str, object]:
    """An example's input made current: a fresh sequence number, timestamp and session."""
    fresh = dict(members)
    if "sequence-number" in fresh:
        fresh["sequence-number"] = str(next(SEQUENCE))
    if "timestamp" in fresh:
        fresh["timestamp"] = now()
    descriptor = fresh.get("descriptor")
    if isinstance(descriptor, dict):
        fresh["descriptor"] = {**descriptor, "session-id": f"sdk-{next(SEQUENCE)}"}
    return fresh


@pytest.mark.parametrize("path", sorted(EXAMPLES_DIR.glob("*.rpc.json")), ids=lambda p: p.name)
def test_the_rpc_examples_reach_the_server_as_sdk_objects(cps: Controller, path: Path) -> None:
    """Each example RPC, loaded into its input object, sent, answered as an output object."""
    ((name, members),) = json.loads(path.read_text(encoding="utf-8")).items()
    module, operation = name.split(":")
    request = objects.load_members(cps.new_input(module, operation), current(members))
    expected = EXAMPLE_OUTCOMES[path.name]
    if expected == "operation-not-supported":
        with pytest.raises(SdkError, match=operation) as refused:
            cps.rpc(module, operation, request)
        assert refused.value.tag == expected
    else:
        assert expected in objects.to_members(cps.rpc(module, operation, request))
