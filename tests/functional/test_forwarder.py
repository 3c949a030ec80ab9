"""``catsctl forwarder`` between a NETCONF client (the C-PS's part) and real SCIs.

Three ``catsctl service-instance`` processes behind two ``catsctl sci`` (SCI A: instance
``a``; SCI B: ``b`` and ``c``), and one ``catsctl forwarder`` (ingress). Steering is written
as the C-PS writes it (agent draft 9.1 MSG-10): ncclient edit-config to the candidate, a
confirmed commit and the confirming commit. Client requests go through the forwarder's data
plane; the instances' own request counters show where they landed.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from lxml import etree

from tests.conftest import ROOT
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import free_port
from tests.functional.test_sci import START_S, Instance, sci_command, sci_config, wait_for
from tools.bench.common import stop


def _listening(port: int) -> bool:
    """Whether something accepts TCP connections on the loopback port."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


pytestmark = pytest.mark.functional
NS = "urn:ietf:params:xml:ns:yang:ietf-cats-steering"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
CPS = ("cps", "cps-secret")
CANDIDATE = "urn:ietf:params:netconf:capability:candidate:1.0"
CONFIRMED = "urn:ietf:params:netconf:capability:confirmed-commit:1.1"
EGRESS_ID = "198.51.100.7"


@dataclass
class Sci:
    """A ``catsctl sci`` in front of its instances."""

    name: str
    folder: Path
    instances: list[Instance]
    port: int = field(default_factory=free_port)
    manage: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def csci_id(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        config = self.folder / f"{self.name}.json"
        nowhere = f"http://127.0.0.1:{free_port()}/restconf"  # no C-SMA: reports fail, quietly
        config.write_text(json.dumps(sci_config(self.port, nowhere, self.instances)))
        state_dir = self.folder / f"{self.name}-state"
        command = sci_command(config, state_dir, ("sci", "unused"), self.manage)
        with (self.folder / f"{self.name}.log").open("ab") as sink:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)

    def healthy(self) -> bool:
        with contextlib.suppress(requests.RequestException, KeyError, ValueError):
            reply = requests.get(f"http://127.0.0.1:{self.manage}/state", timeout=1)
            found = reply.json()["ietf-cats-sci:sci"]["service-instance"]
            return all(i["state"]["health"] == "healthy" for i in found)
        return False

    def served(self) -> int:
        return sum(i.served() for i in self.instances)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process, timeout=10)


@dataclass
class Forwarder:
    """A ``catsctl forwarder`` (restartable, on the same ports and state directory)."""

    folder: Path
    name: str = "forwarder"
    forwarder_id: str = "192.0.2.1"
    role: str = "ingress"
    tunnels: dict[str, int] = field(default_factory=dict)  # egress forwarder: its data port
    data: int = field(default_factory=free_port)
    netconf: int = field(default_factory=free_port)
    restconf: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.data}"

    def start(self, *extra: str) -> None:
        config = self.folder / f"{self.name}.json"
        tunnels = [
            {"forwarder-id": k, "address": f"127.0.0.1:{v}"} for k, v in self.tunnels.items()
        ]
        document = {
            "forwarder-id": self.forwarder_id,
            "egress": tunnels,
            "users": [{"name": CPS[0], "password": CPS[1]}],
        }
        config.write_text(json.dumps(document))
        command = [
            sys.executable,
            "-m",
            "controller.cli",
            "forwarder",
            "--config",
            str(config),
            "--state-dir",
            str(self.folder / f"{self.name}-state"),
            "--role",
            self.role,
            "--listen",
            f"127.0.0.1:{self.data}",
            "--netconf-port",
            str(self.netconf),
            "--restconf-port",
            str(self.restconf),
            *extra,
        ]
        with (self.folder / f"{self.name}.log").open("ab") as sink:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)

    def up(self) -> bool:
        """Its management answers and its data plane listens (it opens after them)."""
        assert self.process is not None
        assert self.process.poll() is None, (self.folder / f"{self.name}.log").read_text()
        with contextlib.suppress(requests.RequestException):
            return self.state() is not None and _listening(self.data)
        return False

    def state(self) -> dict[str, Any]:
        reply = requests.get(
            f"http://127.0.0.1:{self.restconf}/restconf/data/ietf-cats-steering:steering",
            headers={"Accept": "application/yang-data+json"},
            auth=CPS,
            timeout=5,
        )
        reply.raise_for_status()
        found: dict[str, Any] = reply.json()["ietf-cats-steering:steering"]
        return found

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process, timeout=10)

    def nc(self) -> Any:
        return connect_nc(self.netconf, *CPS)


@dataclass
class Bed:
    """Everything the tests use."""

    forwarder: Forwarder
    a: Sci
    b: Sci
    egress: Forwarder


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    folder = tmp_path_factory.mktemp("forwarder")
    instances = {n: Instance(n, free_port(), folder / f"si-{n}.log") for n in ("a", "b", "c")}
    a = Sci("sci-a", folder, [instances["a"]])
    b = Sci("sci-b", folder, [instances["b"], instances["c"]])
    egress = Forwarder(folder, "egress", EGRESS_ID, "egress")
    forwarder = Forwarder(folder, tunnels={EGRESS_ID: egress.data})
    try:
        for instance in instances.values():
            instance.start()
        egress.start()
        forwarder.start()
        wait_for("the instances", lambda: all(i.ready() for i in instances.values()), START_S)
        a.start()
        b.start()
        wait_for("the forwarders", lambda: forwarder.up() and egress.up(), START_S)
        wait_for("healthy SCIs", lambda: a.healthy() and b.healthy(), START_S)
        yield Bed(forwarder, a, b, egress)
    finally:
        running: list[Forwarder | Sci | Instance] = [forwarder, egress, a, b, *instances.values()]
        for each in running:  # all at once, then wait for each
            if each.process is not None and each.process.poll() is None:
                each.process.send_signal(signal.SIGTERM)
        for each in running:
            each.stop()


# -- building the edits (what the C-PS sends) ---------------------------------------------


def _leaf(parent: Any, name: str, value: object) -> None:
    etree.SubElement(parent, f"{{{NS}}}{name}").text = str(value)


def config(*entries: tuple[str, dict[str, Any]], operation: str | None = None) -> str:
    """``<config>`` with ``steering/service`` and ``steering/rule`` entries."""
    root = etree.Element(f"{{{NC}}}config", nsmap={"nc": NC})
    steering = etree.SubElement(root, f"{{{NS}}}steering", nsmap={None: NS})
    for kind, leaves in entries:
        entry = etree.SubElement(steering, f"{{{NS}}}{kind}")
        if operation is not None:
            entry.set(f"{{{NC}}}operation", operation)
        _fill(entry, leaves)
    text: str = etree.tostring(root).decode()
    return text


def _fill(parent: Any, leaves: dict[str, Any]) -> None:
    for name, value in leaves.items():
        if isinstance(value, dict):
            _fill(etree.SubElement(parent, f"{{{NS}}}{name}"), value)
        else:
            _leaf(parent, name, value)


def service(cs_id: str, csci_id: str, **more: Any) -> tuple[str, dict[str, Any]]:
    return "service", {"cs-id": cs_id, "csci-id": csci_id, "egress-forwarder": "egress-1", **more}


def rule(commitment: str, csci_id: str, **more: Any) -> tuple[str, dict[str, Any]]:
    leaves = {
        "commitment-id": commitment,
        "cs-id": "ARS",
        "csci-id": csci_id,
        "egress-forwarder": "egress-1",
        "lifetime": 60,
    }
    return "rule", {**leaves, **more}


def push(manager: Any, document: str, *, confirm: bool = True) -> None:
    """edit-config to the candidate, confirmed commit, confirming commit (MSG-10)."""
    manager.edit_config(target="candidate", config=document)
    manager.commit(confirmed=True, timeout="30")
    if confirm:
        manager.commit()


def send(bed: Bed, count: int = 1, path: str = "/work", **headers: str) -> list[requests.Response]:
    merged = {"CATS-Service-Id": "ARS", **{k.replace("_", "-"): v for k, v in headers.items()}}
    return [
        requests.get(bed.forwarder.url + path, headers=merged, timeout=10) for _ in range(count)
    ]


def entry(state: dict[str, Any], kind: str, key: str) -> dict[str, Any]:
    name = "cs-id" if kind == "service" else "commitment-id"
    found: dict[str, Any] = next(e for e in state.get(kind, []) if str(e[name]) == key)
    return found


# -- the tests, in order (they share one forwarder) ----------------------------------------


def test_hello_offers_candidate_and_confirmed_commit(bed: Bed) -> None:
    with bed.forwarder.nc() as manager:
        assert CANDIDATE in manager.server_capabilities
        assert CONFIRMED in manager.server_capabilities


def test_service_entry_steers_requests_to_the_chosen_sci(bed: Bed) -> None:
    """service-metrics-op 6.2.3 step 7: the CSCI-ID the C-PS chose receives the traffic."""
    with bed.forwarder.nc() as manager:
        push(manager, config(service("ARS", bed.a.csci_id)))
    before_a, before_b = bed.a.served(), bed.b.served()
    replies = [*send(bed, 4), requests.get(f"{bed.forwarder.url}/cats/ARS/work", timeout=10)]
    assert [r.status_code for r in replies] == [200] * 5
    assert {r.headers["CATS-CSCI-Id"] for r in replies} == {bed.a.csci_id}
    assert bed.a.served() - before_a == 5
    assert bed.b.served() == before_b
    counters = entry(bed.forwarder.state(), "service", "ARS")["counters"]
    assert counters["state"] == "active"
    assert int(counters["matched-packets"]) == 5
    assert int(counters["matched-bytes"]) > 0


def test_a_new_selection_moves_new_flows_and_affinity_keeps_old_ones(bed: Bed) -> None:
    """A new selection replaces the entry; an established flow keeps its target (6.2.4)."""
    (pinned,) = send(bed, CATS_Session_Id="client-1")
    assert pinned.headers["CATS-CSCI-Id"] == bed.a.csci_id
    with bed.forwarder.nc() as manager:
        push(manager, config(service("ARS", bed.b.csci_id)))
    before_a, before_b = bed.a.served(), bed.b.served()
    moved = send(bed, 3)
    kept = send(bed, 2, CATS_Session_Id="client-1")
    assert {r.headers["CATS-CSCI-Id"] for r in moved} == {bed.b.csci_id}
    assert {r.headers["CATS-CSCI-Id"] for r in kept} == {bed.a.csci_id}
    assert (bed.a.served() - before_a, bed.b.served() - before_b) == (2, 3)
    state = bed.forwarder.state()
    assert entry(state, "service", "ARS")["counters"]["active-flows"] >= 1
    assert state["summary"]["active-services"] == 1


def test_no_entry_gets_503_with_a_reason(bed: Bed) -> None:
    (reply,) = send(bed, CATS_Service_Id="unknown-service")
    assert reply.status_code == 503
    assert "no active steering entry" in reply.json()["reason"]
    assert requests.get(f"{bed.forwarder.url}/work", timeout=5).status_code == 400


def test_rule_steers_a_session_and_expires_with_a_notification(bed: Bed) -> None:
    """MSG-10 with a 2 s lifetime: the session's steps go to SCI A, then rule-expired."""
    with bed.forwarder.nc() as listener, bed.forwarder.nc() as manager:
        listener.create_subscription()
        push(
            manager,
            config(
                rule(
                    "c-short",
                    bed.a.csci_id,
                    lifetime=2,
                    match={"session-id": "agent-1", "turn-id": 1},
                )
            ),
        )
        (reply,) = send(bed, CATS_Session_Id="agent-1", CATS_Turn_Id="1", CATS_Step_Id="7")
        assert reply.headers["CATS-CSCI-Id"] == bed.a.csci_id
        assert reply.headers["CATS-Commitment-Id"] == "c-short"
        expired = _notification(listener, "rule-expired", timeout=30)
    assert expired.findtext(f"{{{NS}}}commitment-id") == "c-short"
    assert expired.findtext(f"{{{NS}}}entry-kind") == "rule"
    assert expired.findtext(f"{{{NS}}}session-id") == "agent-1"
    state = bed.forwarder.state()
    assert entry(state, "rule", "c-short")["counters"]["state"] == "expired"
    assert state["summary"]["expired-rules"] == 1
    (after,) = send(bed, CATS_Session_Id="agent-1", CATS_Turn_Id="1", CATS_Step_Id="8")
    assert after.headers["CATS-CSCI-Id"] == bed.b.csci_id  # the service entry again
    assert "CATS-Commitment-Id" not in after.headers


def _notification(manager: Any, name: str, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = manager.take_notification(timeout=0.5)
        if found is None:
            continue
        body = etree.fromstring(found.notification_xml.encode())
        event = body.find(f".//{{{NS}}}{name}")
        if event is not None:
            return event
    raise AssertionError(f"no {name} notification")


def test_a_repeated_instruction_creates_no_second_commitment(bed: Bed) -> None:
    """MSG-10 idempotence: same commitment-id, same content: counted, nothing changes."""
    instruction = config(rule("c-idem", bed.a.csci_id, match={"session-id": "agent-2"}))
    with bed.forwarder.nc() as manager:
        push(manager, instruction)
        first = entry(bed.forwarder.state(), "rule", "c-idem")["counters"]
        time.sleep(0.2)
        push(manager, instruction)
    state = bed.forwarder.state()
    assert [r["commitment-id"] for r in state["rule"]].count("c-idem") == 1
    again = entry(state, "rule", "c-idem")["counters"]
    assert again["repeated-instructions"] == "1"
    assert again["effective-expires-at"] == first["effective-expires-at"]  # not extended
    assert again["activated-at"] == first["activated-at"]


def test_a_late_older_instruction_stays_superseded(bed: Bed) -> None:
    """Reordered MSG-10: the handoff rule arrives before the rule it supersedes (9.2)."""
    match = {"session-id": "agent-3"}
    with bed.forwarder.nc() as manager:
        push(manager, config(rule("c-new", bed.b.csci_id, match=match, supersedes="c-old")))
        push(manager, config(rule("c-old", bed.a.csci_id, match=match, priority=1)))
    state = bed.forwarder.state()
    old = entry(state, "rule", "c-old")["counters"]
    assert (old["state"], old["superseded-by"]) == ("superseded", "c-new")
    (reply,) = send(bed, CATS_Session_Id="agent-3")
    assert reply.headers["CATS-Commitment-Id"] == "c-new"
    assert state["summary"]["superseded-rules"] == 1


def test_deleting_the_superseding_rule_reinstates_the_older_one(bed: Bed) -> None:
    """The C-PS withdraws a handoff: the rule it superseded matches again."""
    with bed.forwarder.nc() as manager:
        push(manager, config(("rule", {"commitment-id": "c-new"}), operation="delete"))
    state = bed.forwarder.state()
    assert "c-new" not in {r["commitment-id"] for r in state["rule"]}
    assert entry(state, "rule", "c-old")["counters"]["state"] == "active"
    (reply,) = send(bed, CATS_Session_Id="agent-3", CATS_Step_Id="2")  # a new flow
    assert reply.headers["CATS-Commitment-Id"] == "c-old"


def test_bad_edits_are_refused_and_change_nothing(bed: Bed) -> None:
    from ncclient.operations import RPCError  # noqa: PLC0415

    before = bed.forwarder.state()
    with bed.forwarder.nc() as manager:
        with pytest.raises(RPCError) as bad_csci:
            manager.edit_config(target="candidate", config=config(rule("c-bad", "10.0.0.1:99999")))
        assert bad_csci.value.tag == "invalid-value"
        assert "csci-id" in (bad_csci.value.path or "")
        manager.edit_config(
            target="candidate",
            config=config(
                rule("c-self", bed.a.csci_id, supersedes="c-self", match={"session-id": "s"})
            ),
        )
        with pytest.raises(RPCError) as itself:
            manager.commit()
        assert itself.value.tag == "operation-failed"
        assert itself.value.app_tag == "rule-supersedes-itself"
        assert "c-self" in (itself.value.path or "")
        manager.discard_changes()
    after = bed.forwarder.state()
    assert after.get("rule") == before.get("rule")
    assert after.get("service") == before.get("service")


def test_an_unconfirmed_commit_rolls_back(bed: Bed) -> None:
    """RFC 6241 8.4: without the confirming commit, running and the forwarding state revert."""
    with bed.forwarder.nc() as manager:
        manager.edit_config(target="candidate", config=config(service("ARS", bed.a.csci_id)))
        manager.commit(confirmed=True, timeout="1")
        (during,) = send(bed)
        assert during.headers["CATS-CSCI-Id"] == bed.a.csci_id
        wait_for(
            "the rollback",
            lambda: entry(bed.forwarder.state(), "service", "ARS").get("csci-id") == bed.b.csci_id,
            timeout=30,
        )
    (after,) = send(bed)
    assert after.headers["CATS-CSCI-Id"] == bed.b.csci_id


def test_a_slow_step_raises_step_progress(bed: Bed) -> None:
    """agent draft 8.1 P10, M35: elapsed > expected x tail-factor gives a tail event."""
    slow = bed.a.instances[0]
    monitored = rule(
        "c-tail",
        bed.a.csci_id,
        match={"session-id": "agent-4", "step-id": 3},
        **{"progress-monitoring": {"expected-duration": "50.000", "tail-factor": "2.00"}},
    )
    with bed.forwarder.nc() as listener, bed.forwarder.nc() as manager:
        listener.create_subscription()
        push(manager, config(monitored))
        slow.admin(slow_ms=400)
        try:
            (reply,) = send(bed, CATS_Session_Id="agent-4", CATS_Step_Id="3")
        finally:
            slow.admin(slow_ms=0)
        assert reply.status_code == 200
        event = _notification(listener, "step-progress", timeout=30)
    assert event.findtext(f"{{{NS}}}commitment-id") == "c-tail"
    assert event.findtext(f"{{{NS}}}step-id") == "3"
    assert float(event.findtext(f"{{{NS}}}elapsed") or 0) > 100
    assert bed.forwarder.state()["summary"]["tail-events"] == "1"


def test_through_the_egress_forwarder(bed: Bed) -> None:
    """6.2.3 step 7: encapsulated to the egress, which delivers to the CSCI-ID; 6.2.5 level 2:
    network-only, the egress selects a local CSCI-ID."""
    with bed.forwarder.nc() as manager:
        push(
            manager,
            config(
                (
                    "service",
                    {"cs-id": "tunnelled", "csci-id": bed.a.csci_id, "egress-forwarder": EGRESS_ID},
                ),
                (
                    "service",
                    {
                        "cs-id": "network-only",
                        "fallback-mode": "network-only",
                        "egress-forwarder": EGRESS_ID,
                    },
                ),
            ),
        )
    with bed.egress.nc() as manager:
        push(
            manager,
            config(
                (
                    "service",
                    {
                        "cs-id": "network-only",
                        "fallback-mode": "network-only",
                        "egress-forwarder": EGRESS_ID,
                        "local-csci-id": bed.b.csci_id,
                    },
                ),
            ),
        )
    before_a, before_b = bed.a.served(), bed.b.served()
    (tunnelled,) = send(bed, CATS_Service_Id="tunnelled")
    (chosen,) = send(bed, CATS_Service_Id="network-only")
    assert (tunnelled.status_code, chosen.status_code) == (200, 200)
    assert tunnelled.headers["CATS-CSCI-Id"] == bed.a.csci_id
    assert chosen.headers["CATS-CSCI-Id"] == bed.b.csci_id
    assert (bed.a.served() - before_a, bed.b.served() - before_b) == (1, 1)
    direct = requests.get(f"{bed.egress.url}/cats/tunnelled/work", timeout=5)
    assert direct.status_code == 403  # an egress-only forwarder does not classify clients


def test_a_restart_keeps_the_rules_and_clean_starts_empty(bed: Bed) -> None:
    rules = {r["commitment-id"] for r in bed.forwarder.state()["rule"]}
    expires = entry(bed.forwarder.state(), "rule", "c-idem")["counters"]["effective-expires-at"]
    bed.forwarder.stop()
    bed.forwarder.start()
    wait_for("the forwarder", bed.forwarder.up, timeout=30)
    again = entry(bed.forwarder.state(), "rule", "c-idem")["counters"]
    assert again["effective-expires-at"] == expires  # a restart does not extend a lifetime
    assert {r["commitment-id"] for r in bed.forwarder.state()["rule"]} == rules
    assert send(bed)[0].headers["CATS-CSCI-Id"] == bed.b.csci_id
    bed.forwarder.stop()
    bed.forwarder.start("--clean")
    wait_for("the forwarder", bed.forwarder.up, timeout=30)
    state = bed.forwarder.state()
    assert "rule" not in state
    assert "service" not in state
    assert send(bed)[0].status_code == 503
