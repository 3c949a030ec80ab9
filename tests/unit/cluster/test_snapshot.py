"""A bounded log: gaps are found, a replica behind the log starts from the snapshot, and a
watch whose revision etcd compacted is recovered (fakes at the seams; the functional test
test_cluster_compaction runs the real ones)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from controller.cluster.etcd import Compacted, KeyValue, _events
from controller.cluster.replication import EtcdReplication
from controller.datastore.errors import DatastoreError
from controller.datastore.replication import LogGapError, Record, catch_up, follows_on


def test_the_next_commit_missing_is_a_gap() -> None:
    assert follows_on(2, [{"txid": 3}, {"txid": 4}]) == [{"txid": 3}, {"txid": 4}]
    assert follows_on(2, []) == []  # nothing new
    with pytest.raises(LogGapError) as raised:
        follows_on(2, [{"txid": 6}, {"txid": 7}])
    assert (raised.value.base, raised.value.first) == (2, 6)


@dataclass
class TrimmedLog:
    """A log whose commits up to ``dropped`` are only in the snapshot (at ``snapshot_at``)."""

    last: int
    dropped: int
    snapshot_at: int | None
    reads: int = 0

    def since(self, txid: int) -> list[Record]:
        self.reads += 1
        return follows_on(
            txid, [{"txid": n} for n in range(max(txid, self.dropped) + 1, self.last + 1)]
        )

    def snapshot(self) -> Record | None:
        if self.snapshot_at is None:
            return None
        return {"txid": self.snapshot_at, "document": "{}"}


@dataclass
class Replica:
    """A core that records what it applied."""

    replication: TrimmedLog
    applied: int = 0
    snapshots: list[int] = field(default_factory=list)
    write_lock: threading.RLock = field(default_factory=threading.RLock)
    read_lock: threading.RLock = field(default_factory=threading.RLock)

    def apply_replicated(self, record: Record) -> None:
        assert int(str(record["txid"])) == self.applied + 1
        self.applied += 1

    def apply_snapshot(self, record: Record) -> None:
        self.snapshots.append(int(str(record["txid"])))
        self.applied = int(str(record["txid"]))


def test_a_replica_behind_the_log_loads_the_snapshot_then_the_log_after_it() -> None:
    replica = Replica(TrimmedLog(last=12, dropped=5, snapshot_at=8), applied=2)
    done = catch_up(replica)  # type: ignore[arg-type]
    assert replica.snapshots == [8]
    assert replica.applied == 12
    assert [record["txid"] for record in done] == [9, 10, 11, 12]


def test_a_replica_within_the_log_needs_no_snapshot() -> None:
    replica = Replica(TrimmedLog(last=12, dropped=5, snapshot_at=8), applied=6)
    catch_up(replica)  # type: ignore[arg-type]
    assert (replica.snapshots, replica.applied) == ([], 12)


def test_a_gap_no_snapshot_covers_is_refused_not_skipped() -> None:
    replica = Replica(TrimmedLog(last=12, dropped=5, snapshot_at=None), applied=2)
    with pytest.raises(DatastoreError):
        catch_up(replica)  # type: ignore[arg-type]
    assert replica.applied == 2


def test_an_empty_batch_from_the_watch_reads_the_cluster() -> None:
    replica = Replica(TrimmedLog(last=3, dropped=0, snapshot_at=None), applied=1)
    catch_up(replica, [])  # type: ignore[arg-type]
    assert (replica.applied, replica.replication.reads) == (3, 1)


class _Reply:
    def __init__(self, lines: list[dict[str, object]]) -> None:
        self.lines = [json.dumps(line).encode() for line in lines]

    def iter_lines(self, chunk_size: int | None = None) -> Iterator[bytes]:
        del chunk_size
        return iter(self.lines)


def test_a_watch_answered_compacted_raises_compacted() -> None:
    reply = _Reply(
        [
            {"result": {"created": True}},
            {"result": {"canceled": True, "compact_revision": "42", "cancel_reason": "compacted"}},
        ]
    )
    with pytest.raises(Compacted) as raised:
        list(_events(reply, lambda: False))  # type: ignore[arg-type]
    assert raised.value.revision == 42


@dataclass
class CompactingEtcd:
    """A watch that is compacted once, then delivers nothing until stopped; a range of the
    log read at ``revision``."""

    revision: int = 50
    starts: list[int] = field(default_factory=list)

    def watch(self, prefix: str, start: int, stop: threading.Event) -> Iterator[KeyValue | None]:
        self.starts.append(start)
        if len(self.starts) == 1:
            raise Compacted(40)
        stop.set()
        yield None

    def call(self, path: str, body: dict[str, object]) -> dict[str, object]:
        return {"header": {"revision": str(self.revision)}, "kvs": []}


def test_a_compacted_watch_reads_what_it_missed_and_watches_after_it() -> None:
    etcd = CompactingEtcd()
    replication = EtcdReplication(etcd, "cps1")  # type: ignore[arg-type]
    batches: list[list[Record]] = []

    def deliver(records: list[Record]) -> None:
        batches.append(records)
        replication.since(0)  # what the core does with an empty batch

    replication._follow(deliver)
    assert batches == [[]]
    assert etcd.starts == [1, 51]  # again after the revision the read was made at


@dataclass
class SnapshotEtcd:
    """Keeps the snapshot marker and the transactions made; ``gate`` holds the first one
    until set (an offer in etcd while the next commit offers another)."""

    gate: threading.Event = field(default_factory=threading.Event)
    entered: threading.Event = field(default_factory=threading.Event)
    marker: KeyValue | None = None
    kept: list[int] = field(default_factory=list)
    compacted: list[int] = field(default_factory=list)
    revision: int = 100

    def get(self, key: str) -> KeyValue | None:
        return self.marker if key.endswith("snapshot-txid") else None

    def txn(
        self, compare: list[dict[str, str]], success: list[dict[str, dict[str, str]]]
    ) -> tuple[bool, int, list[object]]:
        self.entered.set()
        self.gate.wait()
        if compare[0]["mod_revision"] != str(self.marker.mod_revision if self.marker else 0):
            return False, self.revision, []
        txid = int(_decoded(success[1]["request_put"]["value"]))
        self.revision += 1
        self.marker = KeyValue("snapshot-txid", str(txid).encode(), self.revision)
        self.kept.append(txid)
        return True, self.revision, []

    def compact(self, revision: int) -> None:
        self.compacted.append(revision)


def _decoded(text: str) -> str:
    import base64  # noqa: PLC0415

    return base64.b64decode(text).decode()


def test_the_leader_keeps_a_snapshot_every_keep_commits_and_one_offered_meanwhile_too() -> None:
    etcd = SnapshotEtcd()
    replication = EtcdReplication(etcd, "cps1", keep=5)  # type: ignore[arg-type]
    assert not replication.snapshot_due(5)  # not the leader
    replication.leads = lambda: True
    assert not replication.snapshot_due(4)
    assert replication.snapshot_due(5)
    replication.offer_snapshot(5, "{}")
    etcd.entered.wait()  # the first offer is in etcd
    assert not replication.snapshot_due(9)
    assert replication.snapshot_due(10)
    replication.offer_snapshot(10, "{}")  # while the first is in etcd: kept next
    offering = replication._offering
    assert offering is not None
    etcd.gate.set()
    offering.join(timeout=30)
    assert not offering.is_alive()
    assert etcd.kept == [5, 10]
    assert etcd.compacted == [101]  # up to the revision of the snapshot it replaced
