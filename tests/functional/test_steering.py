"""The C-PS steers real forwarders: ``catsctl serve`` with a forwarder inventory, two
``catsctl forwarder`` processes (service-metrics-op 6.2.3 step 7, 6.2.5, 8; agent draft MSG-10).

Reports over RESTCONF fill the CST and NST (the section 7.1 tables); the C-PS installs the
selection of each (CS-ID, ingress) of its inventory as ``steering/service`` entries, which the
test reads from each forwarder's running configuration over NETCONF. A CST change moves the
entry; a forwarder restarted empty (``--clean``) is refilled by reconciliation; a forwarder
that is down holds nobody up and converges once it is back. Idempotence of MSG-10 rules is
shown with the southbound's own session and worker against a real forwarder.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from lxml import etree

from controller.southbound.errors import SouthboundError
from controller.southbound.intended import IntendedState
from controller.southbound.peer import Credentials
from controller.southbound.push import ForwarderWorker, PushSettings, push_all
from controller.southbound.session import ConfigSession
from controller.southbound.steering import Changes, rule_entry
from tests.functional.metrics import samples, value
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import JSON, Server, admin_users, seeded_server
from tests.functional.test_forwarder import CPS, Forwarder
from tests.functional.test_service_metrics import CF2, CF3, SCI1, SCI3, Sequence, now

pytestmark = pytest.mark.functional
SM = "ietf-cats-service-metrics"
ST = "ietf-cats-steering"
NS = f"urn:ietf:params:xml:ns:yang:{ST}"
A_ID, B_ID = "10.0.0.1", "10.0.0.2"
CONVERGE_S = 60.0
SEQUENCE = Sequence()


@dataclass
class Bed:
    """The C-PS and its two ingress forwarders A (ARS, VRS at 10.0.0.1), B (ARS at 10.0.0.2)."""

    server: Server
    a: Forwarder
    b: Forwarder


def inventory(a: Forwarder, b: Forwarder) -> dict[str, object]:
    """The C-PS's running: admin, attachments, rate limit and the forwarder inventory."""
    document = admin_users()
    document[f"{SM}:csci-attachments"] = {
        "attachment": [
            {"csci-id": SCI1, "egress": CF2},
            {"csci-id": "188.3.67.3:68", "egress": CF2},
            {"csci-id": SCI3, "egress": CF3},
        ]
    }
    document[f"{SM}:update-control"] = {"rate-limit": {"max-reports": 10_000}}
    common = {"address": "127.0.0.1", "username": CPS[0], "password": CPS[1], "role": ["ingress"]}
    document[f"{ST}:forwarders"] = {
        "reconcile-interval": 2,
        "confirm-timeout": 30,
        "forwarder": [
            {"name": "a", "port": a.netconf, "ingress-id": A_ID, "cs-id": ["ARS", "VRS"], **common},
            {"name": "b", "port": b.netconf, "ingress-id": B_ID, "cs-id": ["ARS"], **common},
        ],
    }
    return document


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    folder = tmp_path_factory.mktemp("steering")
    a = Forwarder(folder, name="fa", forwarder_id=A_ID)
    b = Forwarder(folder, name="fb", forwarder_id=B_ID)
    with contextlib.ExitStack() as stack:
        for forwarder in (a, b):
            forwarder.start()
            stack.callback(forwarder.stop)
        wait_for(lambda: a.up() and b.up(), 60)
        server = stack.enter_context(seeded_server(folder, inventory(a, b)))
        yield Bed(server, a, b)


def wait_for(predicate: Callable[[], Any], timeout: float = CONVERGE_S) -> Any:
    """Poll until ``predicate`` is truthy; its value."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(Exception):
            value = predicate()
            if value:
                return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {predicate}")
        time.sleep(0.1)


def _reconciled_since(worker: ForwarderWorker, mark: float) -> bool:
    return (worker.status.last_reconcile or 0.0) > mark


def call(server: Server, name: str, members: dict[str, Any]) -> dict[str, Any]:
    reply = server.request(
        "POST",
        f"operations/{SM}:{name}",
        json={f"{SM}:input": members},
        headers={"Content-Type": JSON, "Accept": JSON},
    )
    assert reply.status_code in (200, 204), reply.text
    return reply.json() if reply.content else {}


def report(server: Server, sci3_gas: int = 600) -> None:
    """Section 7.1 CST (SCI-3's GAS as given) and NST for both ingresses."""
    entries = [
        ("ARS", SCI1, 400, 5),
        ("VRS", "188.3.67.3:68", 100, 15),
        ("ARS", SCI3, sci3_gas, 6),
    ]
    call(
        server,
        "report-service-metrics",
        {
            "sequence-number": SEQUENCE.next(),
            "timestamp": now(),
            "entry": [
                {
                    "cs-id": cs,
                    "csci-id": csci,
                    "gas": gas,
                    "computing-time": str(ct),
                    "price": 10,
                    "health": "healthy",
                    "source": "sci-test",
                }
                for cs, csci, gas, ct in entries
            ],
        },
    )
    call(
        server,
        "report-network-metrics",
        {
            "sequence-number": SEQUENCE.next(),
            "timestamp": now(),
            "path": [
                {"ingress": A_ID, "egress": CF2, "delay": "8"},
                {"ingress": A_ID, "egress": CF3, "delay": "6"},
                {"ingress": B_ID, "egress": CF2, "delay": "3"},
                {"ingress": B_ID, "egress": CF3, "delay": "9"},
            ],
        },
    )


def running_services(forwarder: Forwarder) -> dict[str, dict[str, str]]:
    """The forwarder's ``steering/service`` entries in running, read over NETCONF."""
    with connect_nc(forwarder.netconf, *CPS) as manager:
        reply = manager.get_config(source="running")
    found: dict[str, dict[str, str]] = {}
    for service in reply.data_ele.iter(f"{{{NS}}}service"):
        leaves = {etree.QName(c).localname: c.text or "" for c in service}
        found[leaves["cs-id"]] = leaves
    return found


def target(forwarder: Forwarder, cs_id: str) -> tuple[str | None, str | None]:
    entry = running_services(forwarder).get(cs_id, {})
    return entry.get("csci-id"), entry.get("egress-forwarder")


def forwarder_state(server: Server, name: str) -> dict[str, Any]:
    """The C-PS's operational state of one forwarder of its inventory."""
    document = server.get_json(f"data/{ST}:forwarders", content="nonconfig")
    for item in document[f"{ST}:forwarders"]["forwarder"]:
        if item["name"] == name:
            state: dict[str, Any] = item["state"]
            return state
    raise KeyError(name)


def test_reports_make_the_cps_install_the_selection_at_each_ingress(bed: Bed) -> None:
    report(bed.server)
    assert wait_for(lambda: target(bed.a, "ARS") == (SCI3, CF3))  # 6 + 6 < 5 + 8 (7.2)
    assert wait_for(lambda: target(bed.b, "ARS") == (SCI1, CF2))  # 5 + 3 < 6 + 9
    assert wait_for(lambda: target(bed.a, "VRS") == ("188.3.67.3:68", CF2))
    assert "VRS" not in running_services(bed.b)  # b does not handle VRS
    entry = running_services(bed.a)["ARS"]
    assert entry["decision-id"].isdigit()  # provenance: the number of a kept decision record
    state = wait_for(lambda: (s := forwarder_state(bed.server, "a"))["in-sync"] and s)
    assert state["session"] == "connected"
    assert state["intended-services"] == 2
    assert int(state["pushes"]) >= 1


def test_a_cst_change_moves_the_entry(bed: Bed) -> None:
    report(bed.server)
    wait_for(lambda: target(bed.a, "ARS") == (SCI3, CF3))
    report(bed.server, sci3_gas=0)  # SCI-3 has no capacity left (GAS 0): re-routing, 6.2.5
    assert wait_for(lambda: target(bed.a, "ARS") == (SCI1, CF2))
    assert target(bed.b, "ARS") == (SCI1, CF2)  # unchanged at b
    report(bed.server)
    assert wait_for(lambda: target(bed.a, "ARS") == (SCI3, CF3))


def test_an_unchanged_report_pushes_nothing(bed: Bed) -> None:
    report(bed.server)
    wait_for(lambda: target(bed.a, "ARS") == (SCI3, CF3))
    wait_for(lambda: forwarder_state(bed.server, "a")["in-sync"])
    before = int(forwarder_state(bed.server, "a")["pushes"])
    report(bed.server)  # unchanged
    report(bed.server, sci3_gas=0)  # changed: one push, after whatever the first caused
    wait_for(lambda: target(bed.a, "ARS") == (SCI1, CF2))
    wait_for(lambda: forwarder_state(bed.server, "a")["in-sync"])
    assert int(forwarder_state(bed.server, "a")["pushes"]) == before + 1
    report(bed.server)
    wait_for(lambda: target(bed.a, "ARS") == (SCI3, CF3))


def test_a_forwarder_restarted_empty_is_refilled(bed: Bed) -> None:
    report(bed.server)
    wait_for(lambda: target(bed.b, "ARS") == (SCI1, CF2))
    bed.b.stop()
    bed.b.start("--clean")
    wait_for(bed.b.up, 60)
    assert wait_for(lambda: target(bed.b, "ARS") == (SCI1, CF2))  # reconnect + reconciliation
    # The refill is visible at the forwarder a moment before the worker records its push, so
    # wait for the worker's state to say so too (until then it may show the old session).
    state = wait_for(
        lambda: (s := forwarder_state(bed.server, "b"))["in-sync"] and int(s["reconnects"]) and s
    )
    assert int(state["reconnects"]) >= 1


def test_entries_not_intended_are_removed(bed: Bed) -> None:
    report(bed.server)
    wait_for(lambda: target(bed.a, "ARS") == (SCI3, CF3))
    stray = Changes(
        put=(
            rule_entry(
                {
                    "commitment-id": "stray",
                    "cs-id": "ARS",
                    "match": {"session-id": "s9"},
                    "csci-id": SCI1,
                    "egress-forwarder": CF2,
                    "lifetime": 60,
                }
            ),
        )
    )
    session = ConfigSession(("127.0.0.1", bed.a.netconf), Credentials(*CPS))
    try:
        wait_for(lambda: session.write(stray))  # retried while the C-PS holds the lock
        assert ("rule", "stray") in session.read()
        assert wait_for(lambda: ("rule", "stray") not in session.read())  # next reconciliation
    finally:
        session.close()


def push_failures(server: Server, forwarder: str) -> float:
    """cats_southbound_push_failures_total of one forwarder, from the C-PS's /metrics."""
    found = samples(server.metrics_port)
    return value(found, "cats_southbound_push_failures_total", forwarder=forwarder)


def test_a_forwarder_down_holds_nobody_up_and_converges_later(bed: Bed) -> None:
    report(bed.server)
    wait_for(lambda: target(bed.b, "ARS") == (SCI1, CF2))
    failures = int(
        wait_for(lambda: (s := forwarder_state(bed.server, "b"))["in-sync"] and s)["failures"]
    )
    pushes_failed = push_failures(bed.server, "b")
    bed.b.stop()
    try:
        report(bed.server, sci3_gas=0)
        assert wait_for(lambda: target(bed.a, "ARS") == (SCI1, CF2))  # a is not held up
        state = wait_for(
            lambda: int((s := forwarder_state(bed.server, "b"))["failures"]) > failures and s
        )
        assert state["session"] == "disconnected"
        assert "last-error" in state
        assert push_failures(bed.server, "b") > pushes_failed  # the metric of each forwarder
        report(bed.server)  # ARS back on SCI-3 at a; b stays on SCI-1 whatever happens
        assert wait_for(lambda: target(bed.a, "ARS") == (SCI3, CF3))
    finally:
        bed.b.start()
    wait_for(bed.b.up, 60)
    assert wait_for(lambda: forwarder_state(bed.server, "b")["in-sync"])
    assert target(bed.b, "ARS") == (SCI1, CF2)


# -- MSG-10 idempotence through the southbound's own session and worker --------------------------


def rule(commitment: str, csci: str, **more: Any) -> dict[str, Any]:
    return {
        "commitment-id": commitment,
        "cs-id": "ARS",
        "match": {"session-id": "s1"},
        "csci-id": csci,
        "egress-forwarder": CF2,
        "lifetime": 600,
        **more,
    }


def rules_state(forwarder: Forwarder) -> dict[str, dict[str, Any]]:
    return {r["commitment-id"]: r for r in forwarder.state().get("rule", [])}


@pytest.fixture(scope="module")
def solo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forwarder]:
    """A forwarder outside the C-PS's inventory (nobody else edits it)."""
    forwarder = Forwarder(tmp_path_factory.mktemp("solo"), name="solo", forwarder_id="10.0.0.9")
    forwarder.start()
    try:
        wait_for(forwarder.up, 60)
        yield forwarder
    finally:
        forwarder.stop()


def test_a_repeated_or_reordered_instruction_creates_no_second_commitment(
    solo: Forwarder,
) -> None:
    """Retried edits (same commitment-id, same content) count repeated-instructions; a
    re-ordered older revision still edits the one entry (agent draft 9.1 MSG-10, 9.3)."""
    session = ConfigSession(("127.0.0.1", solo.netconf), Credentials(*CPS))
    try:
        first = Changes(put=(rule_entry(rule("c-idem", SCI1)),))
        session.write(first)
        session.write(first)  # a retry after a lost reply
        session.write(first)
        entries = rules_state(solo)
        assert list(entries).count("c-idem") == 1
        assert entries["c-idem"]["counters"]["repeated-instructions"] == "2"
        revised = Changes(put=(rule_entry(rule("c-idem", SCI3)),))
        session.write(revised)
        session.write(first)  # the older revision arrives late: still one commitment
        entries = rules_state(solo)
        assert list(entries).count("c-idem") == 1
        assert entries["c-idem"]["csci-id"] == SCI1
        session.write(Changes(remove=(("rule", "c-idem"),)))
        session.write(Changes(remove=(("rule", "c-idem"),)))  # removing twice is fine too
        assert "c-idem" not in rules_state(solo)
    finally:
        session.close()


def test_the_worker_writes_an_intended_rule_once(solo: Forwarder) -> None:
    """intend_rule twice, then a fan-out and a reconciliation: one write, one commitment; a
    fan-out to a forwarder that is down fails for that forwarder only."""
    intended = IntendedState()
    settings = PushSettings(reconcile_interval=0.5)
    live = ConfigSession(("127.0.0.1", solo.netconf), Credentials(*CPS))
    dead = ConfigSession(("127.0.0.1", 1), Credentials(*CPS))
    workers = [
        ForwarderWorker("solo", live, intended, settings),
        ForwarderWorker("nowhere", dead, intended, settings),
    ]
    for worker in workers:
        worker.start()
    try:
        assert intended.intend_rule("solo", rule("c-once", SCI1))
        assert not intended.intend_rule("solo", rule("c-once", SCI1))
        intended.intend_rule("nowhere", rule("c-lost", SCI1))
        results = push_all(workers, intended, timeout=15)
        assert [r.forwarder for r in results.failed] == ["nowhere"]
        assert [r.forwarder for r in results.succeeded] == ["solo"]
        with pytest.raises(SouthboundError, match="nowhere"):
            results.raise_on_error()
        for _ in range(2):  # two reconciliations after the fan-out find nothing to repair
            wait_for(functools.partial(_reconciled_since, workers[0], time.time()))
        status = workers[0].status
        assert status.entries_written == 1
        assert status.repairs == 0
        assert rules_state(solo)["c-once"]["counters"].get("repeated-instructions", "0") == "0"
    finally:
        for worker in workers:
            worker.stop()
