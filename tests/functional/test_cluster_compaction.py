"""The cluster's log stays bounded in etcd (issue 22, etcd compaction).

Real processes on loopback: 3 etcd members and 3 ``catsctl serve --cluster-log-keep 5``
replicas. Every 5 commits the leader puts a snapshot of running into etcd, deletes the log
before it and compacts etcd's history; a replica that joins, or that was stopped across a
trim, starts from the snapshot and applies the log after it.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from controller.cluster.etcd import Etcd, encode, endpoints_of
from controller.datastore.secrets import KEY_FILE
from tests.functional.admin_client import commits, rpc
from tests.functional.cluster import (
    Cluster,
    running_cluster,
    wait_identical,
    wait_until,
)
from tests.functional.restconf_server import JSON, Server, running_server, small_bench

pytestmark = pytest.mark.functional
KEEP = 5
LOG = "/cats/config/log/"
ENTRIES = "data/bench-list:bench"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """3 etcd members and 3 replicas that snapshot every 5 commits."""
    folder = tmp_path_factory.mktemp("compaction")
    with running_cluster(folder, small_bench(), 3, "--cluster-log-keep", str(KEEP)) as running:
        yield running


def etcd_of(cluster: Cluster) -> Etcd:
    """A client of the test's etcd members."""
    return Etcd(endpoints_of(cluster.etcd.url))


def commit_entries(replicas: list[Server], keys: range) -> None:
    """One RESTCONF commit per key, spread over ``replicas`` in turn."""
    for number, key in enumerate(keys):
        body = {"id": key, "name": f"e{key}", "target": "t1", "weight": key % 7 + 1}
        document = json.dumps({"bench-list:entry": [body]})
        server = replicas[number % len(replicas)]
        reply = server.request("POST", ENTRIES, data=document, headers={"Content-Type": JSON})
        assert reply.status_code == 201, reply.text


def log_txids(etcd: Etcd) -> list[int]:
    """The commits the log in etcd holds."""
    return [int(item.key.removeprefix(LOG)) for item in etcd.range_prefix(LOG)]


def head(etcd: Etcd) -> int:
    """The cluster's last commit."""
    found = etcd.get("/cats/config/head")
    assert found is not None
    return int(found.value)


def compacted_at(cluster: Cluster, revision: int) -> bool:
    """Whether etcd refuses a range at ``revision`` as compacted (its history before the
    compaction revision is gone)."""
    member = cluster.etcd.members[0]
    body = {"key": encode("/cats/config/head"), "revision": str(revision)}
    reply = requests.post(f"{member.client_url}/v3/kv/range", json=body, timeout=10)
    return reply.status_code != 200 and "compacted" in reply.text


def revision_now(etcd: Etcd) -> int:
    """etcd's current revision."""
    return int(etcd.call("/kv/range", {"key": encode("/cats/config/head")})["header"]["revision"])


def test_the_log_stays_bounded_and_etcd_history_is_compacted(cluster: Cluster) -> None:
    """20 commits over the replicas: the log keeps at most 2 x 5 commits (the 5 before the
    snapshot and those after it), the snapshot holds running at its commit, and a range at an
    early revision is refused as compacted."""
    etcd = etcd_of(cluster)
    early = revision_now(etcd)
    commit_entries(cluster.replicas, range(200, 220))
    tree = wait_identical(cluster.replicas, any_order=True)
    last = head(etcd)
    assert last >= 20
    wait_until(lambda: len(log_txids(etcd)) <= 2 * KEEP, "the log is trimmed to 2 x keep")
    txids = log_txids(etcd)
    assert txids == list(range(txids[0], last + 1)), txids  # no hole up to the head
    assert txids[0] > 1
    found = etcd.get("/cats/config/snapshot")
    assert found is not None
    snapshot = json.loads(found.value)
    assert txids[0] - 1 <= snapshot["txid"] <= last  # every trimmed commit is in it
    held = json.loads(snapshot["document"])["bench-list:bench"]["entry"]
    assert {entry["id"] for entry in held} <= {
        entry["id"] for entry in tree["bench-list:bench"]["entry"]
    }
    wait_until(lambda: compacted_at(cluster, early), "etcd compacted its early history")


def test_a_new_replica_starts_from_the_snapshot(cluster: Cluster, tmp_path: Path) -> None:
    """A replica with a fresh state directory (the cluster's secrets key copied in) joins
    after the log lost its first commits: it loads the snapshot, applies the log after it and
    serves the same configuration as the others."""
    etcd = etcd_of(cluster)
    commit_entries(cluster.replicas, range(300, 300 + 2 * KEEP))
    wait_until(lambda: log_txids(etcd)[0] > 1, "the log lost its first commits")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    key = cluster.replicas[0].state_dir / KEY_FILE
    (state / KEY_FILE).write_bytes(key.read_bytes())
    (state / KEY_FILE).chmod(0o600)
    options = ("--cluster", cluster.etcd.url, "--node-id", "cps-new")
    with running_server(state, None, *options, "--cluster-log-keep", str(KEEP)) as joined:
        tree = wait_identical([*cluster.replicas, joined], any_order=True)
        assert any(entry["id"] == 305 for entry in tree["bench-list:bench"]["entry"])
        assert "loading the snapshot" in joined.stderr()
        # its history starts at the snapshot, a mark, and goes no further back
        history = commits(joined)
        loaded = history[-1]
        assert (loaded["operation"], loaded["user"]) == ("cluster-snapshot", "system")
        on_first = {entry["id"]: entry for entry in commits(cluster.replicas[0])}
        assert all(on_first[entry["id"]] == entry for entry in history[:-1])
        refused = rpc(joined, "rollback", {"commit-id": str(int(loaded["id"]) - 1)})
        assert refused.status_code == 400, refused.text
        assert f"before commit {loaded['id']}, the cluster's snapshot" in refused.text


def test_a_replica_stopped_across_a_trim_catches_up(cluster: Cluster) -> None:
    """SIGSTOP a replica that does not lead and break its watch (each etcd member restarted
    in turn); the others commit until the log no longer holds the commit after its last one
    and etcd compacted past its watch. After SIGCONT its watch is answered "compacted": it
    reads what it missed (from the snapshot) and serves the same configuration as the
    others."""
    etcd = etcd_of(cluster)
    leader = etcd.get("/cats/leader")
    assert leader is not None
    names = [f"cps{number}" for number in range(1, len(cluster.replicas) + 1)]
    stopped = next(
        replica
        for name, replica in zip(names, cluster.replicas, strict=True)
        if name != leader.value.decode()
    )
    others = [replica for replica in cluster.replicas if replica is not stopped]
    wait_identical(cluster.replicas, any_order=True)
    applied, early = head(etcd), revision_now(etcd)
    os.kill(stopped.process.pid, signal.SIGSTOP)
    try:
        for member in cluster.etcd.members:  # whichever one its watch is on: the stream ends
            cluster.etcd.kill(member)
            cluster.etcd.start(member)
            cluster.etcd.wait_healthy()
        commit_entries(others, range(400, 400 + 3 * KEEP))
        wait_until(lambda: log_txids(etcd)[0] > applied + 1, "the log lost the next commit")
        wait_until(lambda: compacted_at(cluster, early + 1), "etcd compacted past the watch")
    finally:
        os.kill(stopped.process.pid, signal.SIGCONT)
    wait_until(lambda: "compacted its history" in stopped.stderr(), "the watch saw compaction")
    tree = wait_identical(cluster.replicas, any_order=True)
    assert any(entry["id"] == 400 + 3 * KEEP - 1 for entry in tree["bench-list:bench"]["entry"])
