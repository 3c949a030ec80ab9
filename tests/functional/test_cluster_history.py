"""Commit history, audit and startup that follow the cluster (issue 22): every replica lists
every commit of the cluster under the same number, with who made it, how and why, and a
rollback on any replica undoes commits made on the others, as one commit of the cluster; the
audit record of a commit is in the audit log of every replica, naming the replica that made
it; a copy-config to startup on one replica is the startup of every replica, and of a replica
that starts again.

Real processes on loopback: 3 etcd members and 3 ``catsctl serve`` replicas; commits over
RESTCONF on A and NETCONF on B, the history read and the rollback made on C.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from controller.datastore.secrets import KEY_FILE
from controller.netconf.messages import NC
from tests.functional.admin_client import ADMIN_MODULE, HEADERS, commits, output, rpc
from tests.functional.cluster import Cluster, running_cluster, wait_identical, wait_until
from tests.functional.netconf_client import admin_session, ok, on_datastore, operation
from tests.functional.restconf_server import JSON, Server, running_server, small_bench

pytestmark = pytest.mark.functional
CC = "urn:cats-controller:yang:cats-controller-admin"
BENCH = "urn:example:bench-list"
ENTRIES = "data/bench-list:bench"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """3 etcd members and 3 replicas; the first seeded the cluster with a small bench."""
    with running_cluster(tmp_path_factory.mktemp("history"), small_bench()) as running:
        yield running


def post_entry(server: Server, key: int, comment: str | None = None) -> None:
    """A RESTCONF commit of one entry, with a comment and a label when given."""
    body = {"id": key, "name": f"e{key}", "target": "t1", "weight": 3}
    headers = {"Content-Type": JSON}
    if comment is not None:
        headers |= {"Cats-Commit-Comment": comment, "Cats-Commit-Label": f"rc-{key}"}
    document = json.dumps({"bench-list:entry": [body]})
    reply = server.request("POST", ENTRIES, data=document, headers=headers)
    assert reply.status_code == 201, reply.text


def netconf_commit(server: Server, key: int, comment: str) -> str:
    """A NETCONF commit of one entry (the candidate, committed with cc:commit and a comment
    and label); the session's id."""
    with admin_session(server) as session:
        edit = on_datastore(operation("edit-config"), "target", "candidate")
        config = etree.SubElement(edit, NC + "config")
        bench = etree.SubElement(config, f"{{{BENCH}}}bench", nsmap={None: BENCH})
        entry = etree.SubElement(bench, f"{{{BENCH}}}entry")
        for name, value in (("id", key), ("name", f"e{key}"), ("target", "t1"), ("weight", 4)):
            etree.SubElement(entry, f"{{{BENCH}}}{name}").text = str(value)
        ok(session.rpc(edit))
        commit = etree.Element(f"{{{CC}}}commit", nsmap={None: CC})
        etree.SubElement(commit, f"{{{CC}}}comment").text = comment
        etree.SubElement(commit, f"{{{CC}}}label").text = f"nc-{key}"
        ok(session.rpc(commit))
        return str(session.session_id)


def same_history(replicas: list[Server]) -> list[dict[str, Any]]:
    """Wait until every replica lists the same commits (numbers, users, times, comments:
    every field); returns that list, newest first."""
    lists: list[list[dict[str, Any]]] = []

    def same() -> bool:
        lists[:] = [commits(replica) for replica in replicas]
        return all(found == lists[0] for found in lists)

    wait_until(same, "every replica lists the same commit history")
    return lists[0]


def test_every_replica_lists_every_commit_under_the_same_number(cluster: Cluster) -> None:
    """A RESTCONF commit on A and a NETCONF one on B, each with a comment and a label: C (and
    A and B) list both, with the same ids, users, transports, sessions and comments."""
    a, b, c = cluster.replicas
    wait_identical(cluster.replicas)
    post_entry(a, 500, "from A over RESTCONF")
    session = netconf_commit(b, 501, "from B over NETCONF")
    history = same_history([c, a, b])
    by_comment = {entry.get("comment"): entry for entry in history}
    made_on_a, made_on_b = by_comment["from A over RESTCONF"], by_comment["from B over NETCONF"]
    assert int(made_on_b["id"]) == int(made_on_a["id"]) + 1  # the cluster's numbers
    assert (made_on_a["user"], made_on_a["transport"], made_on_a["label"]) == (
        "admin",
        "restconf",
        "rc-500",
    )
    assert made_on_a["source-address"] == "127.0.0.1"
    assert "session-id" not in made_on_a
    assert (made_on_b["user"], made_on_b["transport"], made_on_b["label"]) == (
        "admin",
        "netconf",
        "nc-501",
    )
    assert (made_on_b["operation"], made_on_b["session-id"]) == ("commit", session)
    numbers = [int(entry["id"]) for entry in history]
    assert numbers == list(range(numbers[0], 0, -1))  # from the seed (made on A) on, no hole


def test_a_rollback_on_one_replica_undoes_commits_made_on_the_others(cluster: Cluster) -> None:
    """A commit on A and one on B; a rollback on C to the commit before them restores the
    configuration on all three replicas, and is one commit every replica lists."""
    a, b, c = cluster.replicas
    before = wait_identical(cluster.replicas, any_order=True)
    base = same_history(cluster.replicas)[0]["id"]
    post_entry(a, 600)
    netconf_commit(b, 601, "to be rolled back")
    changed = wait_identical(cluster.replicas, any_order=True)
    assert changed != before
    result = output(rpc(c, "rollback", {"commit-id": base, "comment": "undo A and B"}))
    assert int(result["commit-id"]) == int(base) + 3
    assert wait_identical(cluster.replicas, any_order=True) == before
    newest = same_history(cluster.replicas)[0]
    assert (newest["id"], newest["operation"], newest["comment"]) == (
        result["commit-id"],
        "rollback",
        "undo A and B",
    )


def audited(server: Server, comment: str) -> list[dict[str, Any]]:
    """The audit records of a server whose detail names ``comment`` (a commit's)."""
    reply = server.request("GET", f"data/{ADMIN_MODULE}:audit", headers=HEADERS)
    assert reply.status_code == 200, reply.text
    found: list[dict[str, Any]] = reply.json()[f"{ADMIN_MODULE}:audit"].get("record", [])
    return [record for record in found if comment in record.get("detail", "")]


def test_a_commit_is_in_the_audit_log_of_every_replica(cluster: Cluster) -> None:
    """A RESTCONF commit on A: B and C (and A) each record it once, the same record (time,
    user, transport, source, commit number, detail) naming A's node."""
    a, b, c = cluster.replicas
    post_entry(a, 700, "audited on every replica")
    records: list[list[dict[str, Any]]] = []

    def on_each() -> bool:
        records[:] = [audited(replica, "audited on every replica") for replica in (a, b, c)]
        return all(records)

    wait_until(on_each, "every replica audits the commit made on A")
    assert [len(found) for found in records] == [1, 1, 1]
    made, *applied = [{k: v for k, v in found[0].items() if k != "id"} for found in records]
    assert applied == [made, made]
    assert (made["event"], made["user"], made["node"], made["transport"]) == (
        "commit",
        "admin",
        "cps1",
        "restconf",
    )
    assert made["commit-id"] == same_history(cluster.replicas)[0]["id"]


def copy_to_startup(server: Server) -> None:
    """``<copy-config>`` running to startup over NETCONF (saving the configuration)."""
    with admin_session(server) as session:
        copy = on_datastore(operation("copy-config"), "target", "startup")
        ok(session.rpc(on_datastore(copy, "source", "running")))


def startup_of(server: Server) -> bytes:
    """``<get-config>`` of startup: its ``<data>`` in canonical XML."""
    with admin_session(server) as session:
        reply = ok(session.rpc(on_datastore(operation("get-config"), "source", "startup")))
    data = reply.find(NC + "data")
    assert data is not None, etree.tostring(reply).decode()
    return bytes(etree.tostring(data, method="c14n"))


def holds(startup: bytes, key: int) -> bool:
    """Whether a startup's bench-list holds the entry ``key``."""
    found = etree.fromstring(startup).iterfind(f".//{{{BENCH}}}entry/{{{BENCH}}}id")
    return str(key) in {element.text for element in found}


def test_a_copy_to_startup_on_one_replica_is_every_replicas_startup(cluster: Cluster) -> None:
    """An entry committed on A, then copy-config running to startup on A: get-config of
    startup on A, B and C gives the same tree, with the entry (a read of startup takes the
    cluster's first, as a read of running does)."""
    a, b, c = cluster.replicas
    post_entry(a, 800)
    copy_to_startup(a)
    saved = startup_of(a)
    assert holds(saved, 800)
    assert startup_of(b) == saved
    assert startup_of(c) == saved


def test_a_replica_started_again_takes_the_clusters_startup(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A fourth replica is stopped; meanwhile B commits an entry, saves startup and commits
    another; started again in its state directory, the replica's startup is the cluster's
    (the first entry, not the second), not running as it loaded it nor a file of its own."""
    _, b, _ = cluster.replicas
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / KEY_FILE).write_bytes((cluster.replicas[0].state_dir / KEY_FILE).read_bytes())
    (state / KEY_FILE).chmod(0o600)
    options = ("--cluster", cluster.etcd.url, "--node-id", "cps-again")
    with running_server(state, None, *options):
        pass
    post_entry(b, 810)
    copy_to_startup(b)
    post_entry(b, 811)
    saved = startup_of(b)
    assert holds(saved, 810)
    assert not holds(saved, 811)
    with running_server(state, None, *options) as again:
        assert startup_of(again) == saved
        wait_identical([b, again], any_order=True)  # and running is the cluster's, with 811
