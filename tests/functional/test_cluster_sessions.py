"""Agent sessions are the cluster's: kept in etcd, continued on another replica (issue 22;
docs/cluster.md, "Agent sessions").

Real processes on loopback: 3 etcd members, 3 ``catsctl serve --cluster`` replicas, one
``catsctl csma`` answering query-state for the candidates of the 8.4 example and one ingress
``catsctl forwarder`` handling the agent service. A session admitted on the leader (its
commitment a rule on the forwarder) is visible on the other two; the leader is SIGKILLed; the
agent goes on on another replica (a step boundary, the same commitment extended) and the new
leader keeps the rule at the forwarder, revised. Without the sessions in etcd the other
replica would not know the session (unknown-session) and the new leader would remove its
rule from the forwarder at its first reconciliation.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from controller.cluster.etcd import Etcd, endpoints_of
from tests.functional.cluster import Cluster, running_cluster, wait_until
from tests.functional.restconf_server import Server, free_port
from tests.functional.test_agent_selection import Csma, _instances, call, csma_process
from tests.functional.test_agent_steering import (
    CPS_LOGIN,
    SERVICE,
    _seed,
    reports_to,
    rules_of,
)
from tests.functional.test_cluster_leader import forwarder_term, leader_of
from tests.functional.test_forwarder import Forwarder
from tests.unit.agent_selection import drafts

pytestmark = pytest.mark.functional
PREFIX = "/cats/agent-sessions/"


@dataclass
class Bed:
    """The cluster, the forwarder it steers and the candidates."""

    cluster: Cluster
    forwarder: Forwarder
    specs: list[drafts.Spec]


def agents(
    stack: contextlib.ExitStack, folder: Path, specs: list[drafts.Spec], forwarder_id: str
) -> tuple[Forwarder, Csma]:
    """An ingress forwarder and a C-SMA answering for ``specs`` that reports nowhere (the
    tests advertise for it), both up, stopped when ``stack`` closes."""
    forwarder = Forwarder(folder, name="ingress-1", forwarder_id=forwarder_id)
    forwarder.start()
    stack.callback(forwarder.stop)
    report = reports_to(free_port())  # nobody listens there
    csma = stack.enter_context(csma_process(folder, "csma-1", _instances(specs), CPS_LOGIN, report))
    csma.wait()
    wait_until(forwarder.up, "the forwarder is up")
    return forwarder, csma


@pytest.fixture
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    folder = tmp_path_factory.mktemp("sessions")
    specs = [  # the 8.4 candidates (C preferred) under loopback locators
        replace(s, csci_id=f"127.0.0.1:{free_port()}", service=SERVICE)
        for s in drafts.example_84(0.5)
    ]
    with contextlib.ExitStack() as stack:
        forwarder, csma = agents(stack, folder, specs, "10.0.0.1")
        document = _seed(specs, csma.c_sma(), forwarder)
        cluster = stack.enter_context(running_cluster(folder, document))
        now = time.time()
        for replica in cluster.replicas:  # each replica keeps its own candidate book
            call(replica, "advertise-capability", drafts.capability(specs, now))
            call(replica, "advertise-forwarding-view", drafts.forwarding(specs, now))
        yield Bed(cluster, forwarder, specs)


def commitments(replica: Server, session_id: str) -> list[Any]:
    """The session's commitments as ``replica`` serves them (none: it does not know it)."""
    reply = replica.request(
        "GET",
        f"data/ietf-cats-agent-selection:agent-selection/sessions/session={session_id}",
        headers={"Accept": "application/yang-data+json"},
    )
    if reply.status_code == 404:
        return []
    (entry,) = reply.json()["ietf-cats-agent-selection:session"]
    return list(entry.get("commitment", []))


def test_a_session_goes_on_on_another_replica_and_keeps_its_rule_when_its_leader_dies(
    bed: Bed,
) -> None:
    replicas = bed.cluster.replicas
    wait_until(lambda: forwarder_term(bed.forwarder) > 0, "the first leader pushed its term")
    first = forwarder_term(bed.forwarder)
    a = leader_of(replicas, first)
    b, c = (r for r in replicas if r is not a)

    admitted = call(a, "submit-descriptor", {"descriptor": drafts.descriptor_84("s-ha", SERVICE)})
    assert admitted["selected"] == bed.specs[2].csci_id  # C (8.4)
    commitment_id = admitted["commitment"]["commitment-id"]
    call(a, "step-boundary", {"session-id": "s-ha", "turn-id": 1, "step-id": 1})
    for other in (b, c):  # kept in etcd, followed by the others
        wait_until(
            functools.partial(holds, other, "s-ha", commitment_id),
            f"the session's commitment on {other.port}",
        )
    assert Etcd(endpoints_of(bed.cluster.etcd.url)).get(PREFIX + "s-ha") is not None
    (rule,) = wait_until_found(lambda: rules_of(bed.forwarder, "s-ha"), "the rule is pushed")
    assert rule["commitment-id"] == commitment_id

    a.process.kill()
    a.process.wait(timeout=30)
    wait_until(lambda: forwarder_term(bed.forwarder) > first, "a new leader pushed its term")
    second = forwarder_term(bed.forwarder)
    leader = leader_of([b, c], second)
    reconciled(leader)  # the new leader compared the forwarder with what it intends
    (kept,) = rules_of(bed.forwarder, "s-ha")  # and kept the rule (it had it from etcd)
    assert (kept["commitment-id"], kept["match"]["last-step"]) == (commitment_id, "1")

    # the agent's gateway fails over to B: the session goes on, its commitment extended
    call(b, "step-boundary", {"session-id": "s-ha", "turn-id": 1, "step-id": 2})
    (held,) = commitments(b, "s-ha")
    assert held["commitment-id"] == commitment_id
    assert held["steps"] == {"first": 1, "last": 2}
    wait_until(
        lambda: [x.get("steps") for x in commitments(leader, "s-ha")] == [held["steps"]],
        "the extension on the new leader",
    )
    wait_until(  # the leader, B or not, pushes the revised rule
        lambda: [r["match"].get("last-step") for r in rules_of(bed.forwarder, "s-ha")] == ["2"],
        "the rule revised by the new leader",
    )
    reconciled(leader)
    (revised,) = rules_of(bed.forwarder, "s-ha")
    assert revised["commitment-id"] == commitment_id
    assert leader_state(leader)["intended-rules"] == 1


def reconciled(leader: Server) -> None:
    """Wait until ``leader`` has compared the forwarder with its intended state twice more and
    found it in sync."""
    for _ in range(2):
        mark = leader_state(leader).get("last-reconcile")
        wait_until(
            functools.partial(_moved_on, leader, mark),
            "a reconciliation of the forwarder by the new leader",
        )


def _moved_on(leader: Server, mark: object) -> bool:
    state = leader_state(leader)
    return state.get("last-reconcile") != mark and bool(state["in-sync"])


def holds(replica: Server, session_id: str, commitment_id: str) -> bool:
    """Whether ``replica`` serves the session with that one commitment."""
    return [x["commitment-id"] for x in commitments(replica, session_id)] == [commitment_id]


def leader_state(replica: Server) -> Any:
    """The replica's state of its session to the forwarder."""
    document = replica.get_json("data/ietf-cats-steering:forwarders", content="nonconfig")
    (item,) = document["ietf-cats-steering:forwarders"]["forwarder"]
    return item["state"]


def wait_until_found(find: Any, what: str) -> Any:
    """Wait until ``find()`` returns something; return it."""
    found: list[Any] = []

    def check() -> bool:
        found[:] = [find()]
        return bool(found[0])

    wait_until(check, what)
    return found[0]
