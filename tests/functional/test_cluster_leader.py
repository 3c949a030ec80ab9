"""One leader of the C-PS cluster acts on the network, fenced by its term (issue 22).

Real processes on loopback: 3 etcd members, 3 ``catsctl serve --cluster`` replicas and one
``catsctl forwarder`` in their inventory. Only the leader pushes; every push carries its term
(the etcd revision of its election), which the forwarder keeps (``cats-fencing``) and checks.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import pytest
import requests

from controller.southbound.errors import SouthboundError
from controller.southbound.peer import Credentials
from controller.southbound.session import ConfigSession, WriteSettings
from controller.southbound.steering import Changes
from tests.functional.cluster import Cluster, running_cluster, wait_until
from tests.functional.restconf_server import Server, admin_users
from tests.functional.test_forwarder import CPS, Forwarder

pytestmark = pytest.mark.functional
ST = "ietf-cats-steering"
FAILOVER_BOUND_S = 3.0  # issue 22: a new leader pushes within 3 s of the leader's death
_LEADS = re.compile(r"^(\S+ \S+) INFO catsctl.cluster: cluster: (\S+) leads, term (\d+)", re.M)
_ACCEPTED = re.compile(
    r"^(\S+ \S+) INFO agents.forwarder: fencing: leader term (\d+) accepted", re.M
)


@dataclass
class Bed:
    """The cluster and the forwarder it steers."""

    cluster: Cluster
    forwarder: Forwarder


def seed(forwarder: Forwarder) -> dict[str, object]:
    """The admin and an inventory of one ingress forwarder."""
    document = admin_users()
    common = {"address": "127.0.0.1", "username": CPS[0], "password": CPS[1], "role": ["ingress"]}
    document[f"{ST}:forwarders"] = {
        "reconcile-interval": 2,
        "forwarder": [{"name": "a", "port": forwarder.netconf, "ingress-id": "10.0.0.1", **common}],
    }
    return document


@pytest.fixture
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    """A fresh cluster per test (a test kills or stops replicas)."""
    folder = tmp_path_factory.mktemp("leader")
    forwarder = Forwarder(folder, name="fa", forwarder_id="10.0.0.1")
    with contextlib.ExitStack() as stack:
        forwarder.start()
        stack.callback(forwarder.stop)
        wait_until(forwarder.up, "the forwarder is up")
        cluster = stack.enter_context(running_cluster(folder, seed(forwarder)))
        yield Bed(cluster, forwarder)


def forwarder_term(forwarder: Forwarder) -> int:
    """The leader term the forwarder holds in running (0: none yet)."""
    reply = requests.get(
        f"http://127.0.0.1:{forwarder.restconf}/restconf/data/cats-fencing:fencing",
        headers={"Accept": "application/yang-data+json"},
        auth=CPS,
        timeout=5,
    )
    if reply.status_code == 404:
        return 0
    reply.raise_for_status()
    return int(reply.json()["cats-fencing:fencing"]["leader-term"])


def _stamp(text: str) -> float:
    """A log line's time (logging's asctime, local time) as a POSIX timestamp."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def leader_of(replicas: list[Server], term: int) -> Server:
    """The replica whose log says it leads with ``term``."""
    for replica in replicas:
        if any(int(t) == term for _, _, t in _LEADS.findall(replica.stderr())):
            return replica
    raise AssertionError(f"no replica logged term {term}")


def accepted_at(forwarder: Forwarder, term: int) -> float:
    """When the forwarder logged that it accepted ``term``."""
    log = (forwarder.folder / f"{forwarder.name}.log").read_text(errors="replace")
    for stamp, found in _ACCEPTED.findall(log):
        if int(found) == term:
            return _stamp(stamp)
    raise AssertionError(f"the forwarder did not log term {term}")


def pushes(replica: Server) -> int:
    """How many pushes to forwarder ``a`` the replica made (its operational state)."""
    document = replica.get_json(f"data/{ST}:forwarders", content="nonconfig")
    (state,) = [item["state"] for item in document[f"{ST}:forwarders"]["forwarder"]]
    return int(state["pushes"])


def test_only_the_leader_pushes_and_a_new_one_pushes_within_3_s_of_a_kill(bed: Bed) -> None:
    """The forwarder gets one leader's term and the followers push nothing; kill -9 the
    leader: another replica is elected and its first push (its term, written to the
    forwarder) is accepted within 3 s of the kill, as the forwarder's own log times it."""
    wait_until(lambda: forwarder_term(bed.forwarder) > 0, "the first leader pushed its term")
    first = forwarder_term(bed.forwarder)
    leader = leader_of(bed.cluster.replicas, first)
    others = [r for r in bed.cluster.replicas if r is not leader]
    assert pushes(leader) >= 1
    assert [pushes(replica) for replica in others] == [0, 0]
    killed_at = time.time()
    leader.process.kill()
    leader.process.wait()
    wait_until(lambda: forwarder_term(bed.forwarder) > first, "a new leader pushed its term")
    second = forwarder_term(bed.forwarder)
    assert leader_of(others, second) in others
    took = accepted_at(bed.forwarder, second) - killed_at
    print(f"failover: leader killed to the new leader's first push accepted: {took:.2f} s")
    assert took <= FAILOVER_BOUND_S


def test_a_paused_leader_is_fenced_and_steps_down(bed: Bed) -> None:
    """SIGSTOP the leader past its lease: another replica leads and writes a higher term. The
    forwarder refuses a push with the old term (the southbound's own session, as the resumed
    leader would send it); after SIGCONT the old leader steps down."""
    wait_until(lambda: forwarder_term(bed.forwarder) > 0, "the first leader pushed its term")
    old = forwarder_term(bed.forwarder)
    leader = leader_of(bed.cluster.replicas, old)
    os.kill(leader.process.pid, signal.SIGSTOP)
    try:
        wait_until(lambda: forwarder_term(bed.forwarder) > old, "a new leader pushed its term")
    finally:
        os.kill(leader.process.pid, signal.SIGCONT)
    new = forwarder_term(bed.forwarder)
    wait_until(lambda: "stepped down (term" in leader.stderr(), "the old leader stepped down")
    session = ConfigSession(("127.0.0.1", bed.forwarder.netconf), Credentials(*CPS))
    try:
        with pytest.raises(SouthboundError) as refused:
            session.write(Changes((), ()), WriteSettings(term=old))
    finally:
        session.close()
    assert "lower than term" in str(refused.value.items[0].message)
    assert forwarder_term(bed.forwarder) == new
