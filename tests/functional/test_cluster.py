"""The C-PS cluster (issue 22): replicas of ``catsctl serve`` sharing running through etcd.

Real processes on loopback: 3 etcd members (Debian's etcd 3.4) and 3 replicas, each with its
own state directory; commits go through RESTCONF and NETCONF as a client's would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from controller.cluster.etcd import Etcd, endpoints_of
from tests.functional.cluster import Cluster, config_tree, running_cluster, wait_identical
from tests.functional.netconf_client import admin_nc
from tests.functional.restconf_server import ADMIN, JSON, Server, running_server, small_bench

pytestmark = pytest.mark.functional
ENTRIES = "data/bench-list:bench"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """3 etcd members and 3 replicas; the first seeded the cluster with a small bench."""
    with running_cluster(tmp_path_factory.mktemp("cluster"), small_bench()) as running:
        yield running


def entry(key: int, weight: int = 1, name: str | None = None) -> dict[str, Any]:
    """One bench-list entry pointing at the seeded target."""
    return {"id": key, "name": name or f"e{key}", "target": "t1", "weight": weight}


def post_entry(server: Server, body: dict[str, Any]) -> requests.Response:
    """Create an entry (RFC 8040 4.4.1: 409 when it exists)."""
    document = json.dumps({"bench-list:entry": [body]})
    return server.request("POST", ENTRIES, data=document, headers={"Content-Type": JSON})


def weight_of(server: Server, key: int) -> int | None:
    """An entry's weight on one replica (None: no such entry there)."""
    reply = server.request("GET", f"{ENTRIES}/entry={key}", headers={"Accept": JSON})
    if reply.status_code == 404:
        return None
    assert reply.status_code == 200, reply.text
    return int(reply.json()["bench-list:entry"][0]["weight"])


def test_etcd_members_replicate_a_key(cluster: Cluster) -> None:
    """The fixture's etcd is a real 3-member cluster: a key put through one member is read
    through each of the others."""
    members = cluster.etcd.members
    assert len(members) == 3
    assert all(member.healthy() for member in members)
    first = Etcd(endpoints_of(f"etcd://127.0.0.1:{members[0].client_port}"))
    first.put("/test/probe", b"through-member-1")
    for member in members[1:]:
        found = Etcd(endpoints_of(f"etcd://127.0.0.1:{member.client_port}")).get("/test/probe")
        assert found is not None
        assert found.value == b"through-member-1"


def test_a_replica_that_joined_has_the_seeded_configuration(cluster: Cluster) -> None:
    """Only the first replica had --init-data; the others got running from the cluster."""
    tree = wait_identical(cluster.replicas)
    assert tree["bench-list:bench"]["entry"][0]["name"] == "one"


def test_a_write_on_one_replica_is_read_on_the_others(cluster: Cluster) -> None:
    """A RESTCONF commit on A is read back at once on A (its own write) and reaches B and C."""
    a, b, c = cluster.replicas
    reply = post_entry(a, entry(100, weight=7))
    assert reply.status_code == 201, reply.text
    assert weight_of(a, 100) == 7  # read-your-writes on the replica used: no wait
    tree = wait_identical([a, b, c])
    assert 100 in [item["id"] for item in tree["bench-list:bench"]["entry"]]


def test_a_netconf_commit_on_one_replica_reaches_the_others(cluster: Cluster) -> None:
    """The candidate's commit (RFC 6241 8.3.4.1) goes the same way as a RESTCONF write."""
    a, b, _ = cluster.replicas
    config = (
        '<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">'
        '<bench xmlns="urn:example:bench-list"><entry><id>101</id><name>nc</name>'
        "<target>t1</target><weight>9</weight></entry></bench></config>"
    )
    with admin_nc(b) as session:
        session.edit_config(target="candidate", config=config)
        session.commit()
    assert weight_of(b, 101) == 9
    wait_identical(cluster.replicas)
    assert weight_of(a, 101) == 9


def test_a_write_on_one_replica_is_read_at_once_on_another(cluster: Cluster) -> None:
    """Read-your-writes on any replica: 20 times, a RESTCONF write on A is read at once (no
    wait between) on B over RESTCONF and on C with NETCONF get-config: a replica learns the
    cluster's last commit with a quorum read and applies what it misses before it answers."""
    a, b, c = cluster.replicas
    with admin_nc(c) as session:
        for round_ in range(20):
            key = 400 + round_
            reply = post_entry(a, entry(key, weight=round_ + 1))
            assert reply.status_code == 201, reply.text
            assert weight_of(b, key) == round_ + 1, f"round {round_}: B has not the write"
            found = session.get_config(
                source="running",
                filter=(
                    "subtree",
                    f'<bench xmlns="urn:example:bench-list"><entry><id>{key}</id></entry></bench>',
                ),
            ).data_xml
            assert f"<weight>{round_ + 1}</weight>" in found, f"round {round_}: C: {found}"


def _race(servers: list[Server], bodies: list[dict[str, Any]]) -> list[requests.Response]:
    """POST one body to each server at the same moment; the replies in the same order."""
    start = threading.Barrier(len(servers))
    replies: list[requests.Response | None] = [None] * len(servers)

    def send(index: int) -> None:
        session = requests.Session()
        session.auth = ADMIN
        document = json.dumps({"bench-list:entry": [bodies[index]]})
        start.wait()
        replies[index] = session.post(
            servers[index].url(ENTRIES),
            data=document,
            headers={"Content-Type": JSON},
            timeout=60,
        )

    threads = [threading.Thread(target=send, args=(n,)) for n in range(len(servers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [reply for reply in replies if reply is not None]


def test_concurrent_creates_of_one_entry_on_two_replicas_one_wins(cluster: Cluster) -> None:
    """Two replicas create the same entry at once, with different content, 20 times: each
    time exactly one is created (201), the other refused (409: ``in-use`` when it had not
    seen the winner, ``data-exists`` when it had), and every replica ends with the winner's
    content: no silent overwrite."""
    a, b, c = cluster.replicas
    for round_ in range(20):
        key = 200 + round_
        replies = _race([a, b], [entry(key, weight=1), entry(key, weight=2)])
        statuses = sorted(reply.status_code for reply in replies)
        assert statuses == [201, 409], [r.text for r in replies]
        loser = next(reply for reply in replies if reply.status_code == 409)
        tag = loser.json()["ietf-restconf:errors"]["error"][0]["error-tag"]
        assert tag in ("in-use", "resource-denied", "data-exists"), loser.text
        winner = 1 if replies[0].status_code == 201 else 2
        wait_identical([a, b, c])
        assert {weight_of(s, key) for s in (a, b, c)} == {winner}


def test_concurrent_commits_of_different_entries_both_hold(cluster: Cluster) -> None:
    """Two replicas create different entries at once, 20 times: both commits hold (the
    later one is validated again on the state that holds the first), on every replica."""
    a, b, c = cluster.replicas
    for round_ in range(20):
        keys = (300 + 2 * round_, 301 + 2 * round_)
        replies = _race([a, b], [entry(keys[0]), entry(keys[1])])
        assert [reply.status_code for reply in replies] == [201, 201], [r.text for r in replies]
    tree = wait_identical([a, b, c])
    ids = {item["id"] for item in tree["bench-list:bench"]["entry"]}
    assert {*range(300, 340)} <= ids


def test_a_write_after_another_replicas_acknowledged_commit_starts_from_it(
    cluster: Cluster,
) -> None:
    """Writes one after the other on different replicas are not concurrent: an entry created
    on one replica is changed on the next at once (no 404 from a replica whose watch has not
    brought the creation yet, no ``in-use`` against a commit acknowledged before the write
    began), 30 times, and every replica ends with the last write (docs/cluster.md)."""
    replicas = cluster.replicas
    for round_ in range(30):
        key = 500 + round_
        created = post_entry(replicas[round_ % 3], entry(key, weight=1))
        assert created.status_code == 201, created.text
        document = json.dumps({"bench-list:entry": [{"id": key, "weight": 2}]})
        for step in (1, 2):
            server = replicas[(round_ + step) % 3]
            changed = server.request(
                "PATCH", f"{ENTRIES}/entry={key}", data=document, headers={"Content-Type": JSON}
            )
            assert changed.status_code == 204, (step, changed.text)
    tree = wait_identical(replicas)
    weights = {item["id"]: item["weight"] for item in tree["bench-list:bench"]["entry"]}
    assert all(weights[500 + round_] == 2 for round_ in range(30))


def test_every_replica_serves_the_same_tree(cluster: Cluster) -> None:
    """After all the above the three trees are identical, compared whole."""
    trees = [config_tree(replica) for replica in cluster.replicas]
    assert trees[0] == trees[1] == trees[2]


def test_a_replica_with_another_secrets_key_is_refused(cluster: Cluster, tmp_path: Path) -> None:
    """The configuration holds passwords encrypted with the cluster's key: a replica whose
    state directory has another key does not start, and says what to do."""
    state = tmp_path / "state"
    with (
        pytest.raises(RuntimeError, match="secrets key") as refused,
        running_server(state, None, "--cluster", cluster.etcd.url, "--node-id", "stranger"),
    ):
        pass
    assert "copy the key of a replica" in str(refused.value)
