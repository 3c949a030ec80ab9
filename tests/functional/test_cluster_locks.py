"""NETCONF locks of running held across the C-PS cluster (issue 22; docs/cluster.md, "NETCONF
locks").

Real processes on loopback: 3 etcd members and 3 replicas. A session locks running on one
replica; every write of running from anyone else, on any replica, over NETCONF or RESTCONF, is
refused and changes nothing; the lock is released when its session unlocks, closes, drops its
connection or is killed, and when its replica dies (its lease expires). Each test would pass a
write or a lock that the feature refuses if the lock were still each replica's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from lxml import etree

from tests.functional.cluster import Cluster, config_tree, running_cluster, wait_until
from tests.functional.netconf_client import (
    RawSession,
    admin_session,
    bench_edit,
    error_items,
    ok,
    on_datastore,
    only_error,
    operation,
)
from tests.functional.restconf_server import JSON, Server, small_bench

pytestmark = pytest.mark.functional
ENTRIES = "data/bench-list:bench"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """3 etcd members and 3 replicas seeded with a small bench (the last test kills one)."""
    with running_cluster(tmp_path_factory.mktemp("locks"), small_bench()) as running:
        yield running


def lock(session: RawSession, datastore: str = "running") -> Any:
    return session.rpc(on_datastore(operation("lock"), "target", datastore))


def unlock(session: RawSession, datastore: str = "running") -> Any:
    return session.rpc(on_datastore(operation("unlock"), "target", datastore))


def entry_xml(key: int, name: str) -> str:
    return f"<entry><id>{key}</id><name>{name}</name><target>t1</target><weight>1</weight></entry>"


def post_entry(server: Server, key: int) -> Any:
    body = {"bench-list:entry": [{"id": key, "name": f"r{key}", "target": "t1", "weight": 1}]}
    return server.request(
        "POST", ENTRIES, data=json.dumps(body), headers={"Content-Type": JSON}, timeout=60
    )


def trees(cluster: Cluster) -> list[Any]:
    """Running's configuration on each replica still running (consistent reads)."""
    return [config_tree(server) for server in cluster.replicas if server.process.poll() is None]


def denied_by(reply: Any, holder: RawSession) -> None:
    """``reply`` is lock-denied naming ``holder``'s session."""
    error = only_error(reply)
    assert error["tag"] == "lock-denied", error
    assert error["info/session-id"] == str(holder.session_id), error


def test_a_lock_on_one_replica_refuses_every_other_writer_everywhere(cluster: Cluster) -> None:
    """A's session holds running: edit-config, a candidate commit and a lock from B's
    session are refused lock-denied naming it; RESTCONF writes on B and C get 409; nothing
    changes on any replica. The holder commits; once it unlocks, B's edit is taken."""
    a, b, c = cluster.replicas
    with admin_session(a) as holder, admin_session(b) as other:
        assert holder.session_id != other.session_id  # one session id, one session
        ok(lock(holder))
        before = trees(cluster)
        denied_by(other.rpc(bench_edit(entry_xml(201, "b"))), holder)
        denied_by(lock(other), holder)
        ok(other.rpc(bench_edit(entry_xml(202, "b"), target="candidate")))
        denied_by(other.rpc(operation("commit")), holder)
        ok(other.rpc(operation("discard-changes")))
        for server, key in ((b, 203), (c, 204), (a, 205)):  # RESTCONF: no session, refused
            reply = post_entry(server, key)
            assert reply.status_code == 409, reply.text
            assert "lock-denied" in reply.text
        assert trees(cluster) == before  # nothing was committed anywhere
        ok(holder.rpc(bench_edit(entry_xml(206, "a"))))  # the holder writes
        wait_until(lambda: '"id": 206' in json.dumps(config_tree(c)), "the commit on C")
        ok(unlock(holder))
        ok(other.rpc(bench_edit(entry_xml(201, "b"))))
        ok(lock(other))  # free: B takes it
        denied_by(lock(holder), other)
        ok(unlock(other))
    assert all(tree == trees(cluster)[0] for tree in trees(cluster))


def locks_on(server: Server, attempts: RawSession) -> None:
    """Wait until ``attempts`` (a session on ``server``) takes the lock of running."""

    def taken() -> bool:
        reply = lock(attempts)
        items = error_items(reply)
        assert not items or items[0]["tag"] == "lock-denied", items
        return not items

    wait_until(taken, f"a session on {server.port} locks running")


def test_a_lock_ends_with_its_session_dropped_or_killed(cluster: Cluster) -> None:
    """A session that drops its connection, or is killed, releases its lock on every
    replica (RFC 6241 7.5, 7.9)."""
    a, b, _ = cluster.replicas
    with admin_session(b) as other:
        holder = admin_session(a)
        ok(lock(holder))
        denied_by(lock(other), holder)
        holder.close()  # the TCP connection dropped, no close-session
        locks_on(b, other)
        ok(unlock(other))
        with admin_session(a) as victim, admin_session(a) as killer:
            ok(lock(victim))
            denied_by(lock(other), victim)
            kill = operation("kill-session", session_id=str(victim.session_id))
            ok(killer.rpc(kill))
            ok(lock(other))  # released before kill-session was answered
            ok(unlock(other))


def test_kill_session_reaches_the_session_of_another_replica(cluster: Cluster) -> None:
    """lock-denied names a session of replica A; kill-session of it sent to B kills it
    (RFC 6241 7.9: its lock released before the reply, its connection closed), and the
    killed session's replica records who killed it. An id no replica holds is refused."""
    a, b, _ = cluster.replicas
    with admin_session(a) as victim, admin_session(b) as killer, admin_session(b) as other:
        ok(lock(victim))
        denied_by(lock(other), victim)
        ok(killer.rpc(operation("kill-session", session_id=str(victim.session_id))))
        ok(lock(other))  # released before kill-session was answered
        with pytest.raises((EOFError, OSError)):
            victim.receive()  # the server closed the victim's session
        ok(unlock(other))
        nobody = only_error(killer.rpc(operation("kill-session", session_id="999999999")))
        assert nobody["tag"] == "invalid-value", nobody
        assert "no session 999999999" in nobody["message"], nobody
    killed = f"session {victim.session_id} of admin killed by session {killer.session_id}"
    wait_until(lambda: killed in kills(a), "the kill in A's audit")


def kills(server: Server) -> list[str]:
    """The details of the kill-session records of a replica's audit."""
    reply = server.request("GET", "data/cats-controller-admin:audit", headers={"Accept": JSON})
    assert reply.status_code == 200, reply.text
    records = reply.json()["cats-controller-admin:audit"].get("record", [])
    return [r.get("detail", "") for r in records if r["event"] == "kill-session"]


def copy_to_startup(session: RawSession) -> Any:
    copy = on_datastore(operation("copy-config"), "target", "startup")
    return session.rpc(on_datastore(copy, "source", "running"))


def startup_of(session: RawSession) -> str:
    """Startup as the session's replica serves it (get-config), as text."""
    reply = session.rpc(on_datastore(operation("get-config"), "source", "startup"))
    return str(etree.tostring(reply).decode())


def test_a_lock_of_startup_on_one_replica_refuses_every_other_writer_of_startup(
    cluster: Cluster,
) -> None:
    """startup is the cluster's (one document in etcd), so its lock is too: while A's session
    holds it, B's copy-config to startup and B's lock of startup are refused lock-denied
    naming it, and startup stays as A wrote it on every replica; running is another lock.
    Once A unlocks, B's copy is taken everywhere."""
    a, b, c = cluster.replicas
    with admin_session(a) as holder, admin_session(b) as other, admin_session(c) as third:
        ok(lock(holder, "startup"))
        ok(copy_to_startup(holder))
        ok(other.rpc(bench_edit(entry_xml(401, "after-copy"))))  # running is not locked
        denied_by(copy_to_startup(other), holder)
        denied_by(lock(other, "startup"), holder)
        assert "after-copy" not in startup_of(other)
        assert "after-copy" not in startup_of(third)
        ok(unlock(holder, "startup"))
        ok(copy_to_startup(other))
        wait_until(lambda: "after-copy" in startup_of(third), "B's copy of startup on C")


def test_the_lock_of_a_killed_replica_expires_with_its_lease(cluster: Cluster) -> None:
    """A's replica dies (SIGKILL) while its session holds the lock: B is refused until A's
    lease expires, then B locks and writes (and C, not holding it, may not)."""
    a, b, c = cluster.replicas
    holder = admin_session(a)
    try:
        ok(lock(holder))
        with admin_session(b) as other:
            denied_by(lock(other), holder)
            a.process.kill()
            a.process.wait(timeout=30)
            locks_on(b, other)
            ok(other.rpc(bench_edit(entry_xml(301, "after"))))
            reply = post_entry(c, 302)
            assert reply.status_code == 409, reply.text
            ok(unlock(other))
            reply = post_entry(c, 302)
            assert reply.status_code == 201, reply.text
    finally:
        holder.close()
    tree = json.dumps(config_tree(b))
    assert '"id": 301' in tree
    assert '"id": 302' in tree
