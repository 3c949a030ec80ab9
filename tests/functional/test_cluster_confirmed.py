"""Confirmed commits held across the C-PS cluster (issue 22; docs/cluster.md, "Confirmed
commits").

Real processes on loopback: 3 etcd members and 3 replicas. A persisted confirmed commit taken
on one replica is confirmed or cancelled by its persist-id from a session on another, and is
rolled back to its backup on the others when its replica dies and its timeout passes; one
without persist is rolled back when its replica dies. Each test would fail if the confirmed
commit were still each replica's own: the other replica would know no persist-id, and nobody
would roll back the commit of a dead replica.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from controller.cluster.etcd import Etcd, endpoints_of
from tests.functional.cluster import Cluster, config_tree, running_cluster, wait_until
from tests.functional.netconf_client import admin_nc
from tests.functional.restconf_server import Server, small_bench

pytestmark = pytest.mark.functional
BL = "urn:example:bench-list"
KEY = "/cats/confirmed"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """3 etcd members and 3 replicas seeded with a small bench (the last tests kill two)."""
    with running_cluster(tmp_path_factory.mktemp("confirmed"), small_bench()) as running:
        yield running


def config(key: int) -> str:
    """A ``<config>`` adding bench entry ``key``."""
    entry = f"<entry><id>{key}</id><name>c{key}</name><target>t1</target><weight>1</weight></entry>"
    return (
        '<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">'
        f'<bench xmlns="{BL}">{entry}</bench></config>'
    )


def has(server: Server, key: int) -> bool:
    """Whether ``server``'s running has bench entry ``key``."""
    entries = config_tree(server).get("bench-list:bench", {}).get("entry", [])
    return any(str(entry["id"]) == str(key) for entry in entries)


def on_all(servers: list[Server], key: int) -> bool:
    return all(has(server, key) for server in servers)


def pending(cluster: Cluster) -> bool:
    """Whether the cluster's confirmed commit key is there (etcd, read directly)."""
    return Etcd(endpoints_of(cluster.etcd.url)).get(KEY) is not None


def confirmed_commit(server: Server, key: int, timeout: int, persist: str) -> None:
    """Add entry ``key`` by a persisted confirmed commit from a session on ``server``."""
    with admin_nc(server) as m:
        m.edit_config(target="candidate", config=config(key))
        m.commit(confirmed=True, timeout=str(timeout), persist=persist)


def back_to(servers: list[Server], before: Any) -> None:
    """Wait until every one of ``servers`` serves ``before`` again (the backup)."""
    wait_until(
        lambda: all(config_tree(server) == before for server in servers),
        "running is the backup again on " + ", ".join(str(s.port) for s in servers),
    )


def test_a_persisted_commit_is_confirmed_from_another_replica(cluster: Cluster) -> None:
    """Taken on A with a 6 s timeout, confirmed with its persist-id on B: the change stays on
    all three past the timeout (a later 6 s confirmed commit, rolled back, shows it passed)."""
    a, b, _ = cluster.replicas
    with admin_nc(b) as other:  # open first: it confirms well within the timeout
        confirmed_commit(a, 501, 6, "keep-501")
        assert pending(cluster)
        other.commit(persist_id="keep-501")
    assert not pending(cluster)
    with admin_nc(a) as m:  # its session stays: rolled back by its timeout, once due
        m.edit_config(target="candidate", config=config(502))
        m.commit(confirmed=True, timeout="6")
        wait_until(lambda: not pending(cluster), "the later confirmed commit times out")
    wait_until(lambda: not any(has(s, 502) for s in cluster.replicas), "502 rolled back")
    assert on_all(cluster.replicas, 501)


def test_a_persisted_commit_is_cancelled_from_another_replica(cluster: Cluster) -> None:
    """Taken on A, cancelled with its persist-id on C: all three serve the backup again."""
    a, _, c = cluster.replicas
    before = config_tree(a)
    confirmed_commit(a, 601, 600, "cancel-601")
    wait_until(lambda: on_all(cluster.replicas, 601), "601 on every replica")
    with admin_nc(c) as other:
        other.cancel_commit(persist_id="cancel-601")
    back_to(cluster.replicas, before)
    assert not pending(cluster)


def test_a_persisted_commit_of_a_killed_replica_is_rolled_back_at_its_timeout(
    cluster: Cluster,
) -> None:
    """Taken on A with a 10 s timeout, A SIGKILLed: B and C serve the backup again."""
    a, b, c = cluster.replicas
    before = config_tree(a)
    confirmed_commit(a, 701, 10, "lost-701")
    wait_until(lambda: on_all([b, c], 701), "701 on B and C")
    a.process.kill()
    a.process.wait(timeout=30)
    back_to([b, c], before)
    assert not pending(cluster)


def test_a_commit_without_persist_ends_with_its_killed_replica(cluster: Cluster) -> None:
    """Taken on B without persist (600 s), B SIGKILLed with its session open: C serves the
    backup again once B's lease expires (RFC 6241 8.4.1: it ends with its session)."""
    _, b, c = cluster.replicas
    before = config_tree(c)
    m = admin_nc(b)
    try:
        m.edit_config(target="candidate", config=config(801))
        m.commit(confirmed=True, timeout="600")
        wait_until(lambda: has(c, 801), "801 on C")
        b.process.kill()
        b.process.wait(timeout=30)
        back_to([c], before)
        assert not pending(cluster)
    finally:
        with contextlib.suppress(Exception):
            m.close_session()
