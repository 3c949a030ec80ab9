"""A consistent read of running on a replica (controller.datastore.replication.consistent),
against a fake cluster log at the Replication seam (the functional test runs the real one)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from controller.cluster.replication import SharedRead
from controller.datastore.api import CLUSTER_READ_TIMEOUT
from controller.datastore.errors import DatastoreError
from controller.datastore.replication import Record, consistent


@dataclass
class Log:
    """The cluster's commits; ``down`` as a probe would see a lost quorum."""

    records: list[Record] = field(default_factory=list)
    down: str | None = None
    asked: int = 0

    def commit(self, txid: int, record: Record) -> None:
        self.records.append(record)

    def since(self, txid: int) -> list[Record]:
        return [r for r in self.records if int(str(r["txid"])) > txid]

    def last(self) -> int | None:
        self.asked += 1
        return None if self.down == "now" else len(self.records)

    def problem(self) -> str | None:
        return None if self.down in (None, "now") else self.down

    def snapshot(self) -> Record | None:
        return None

    def snapshot_due(self, txid: int) -> bool:
        return False

    def offer_snapshot(self, txid: int, document: str) -> None:
        pass

    def start(self, deliver: Callable[[list[Record]], None]) -> None:
        del deliver

    def close(self) -> None:
        pass


@dataclass
class Replica:
    """What a replica's core offers the follower: what it applied, its locks."""

    replication: Log
    applied: int = 0
    write_lock: threading.RLock = field(default_factory=threading.RLock)
    read_lock: threading.RLock = field(default_factory=threading.RLock)

    def apply_replicated(self, record: Record) -> None:
        self.applied = int(str(record["txid"]))

    def apply_snapshot(self, record: Record) -> None:
        self.applied = int(str(record["txid"]))


def cluster(commits: int, applied: int) -> Replica:
    log = Log([{"txid": n, "edits": []} for n in range(1, commits + 1)])
    return Replica(log, applied)


def test_a_replica_behind_applies_the_missing_commits_before_the_read() -> None:
    replica = cluster(commits=3, applied=1)
    consistent(replica)
    assert replica.applied == 3
    assert replica.replication.asked == 1


def test_a_replica_up_to_date_answers_after_one_quorum_read() -> None:
    replica = cluster(commits=2, applied=2)
    consistent(replica)
    assert (replica.applied, replica.replication.asked) == (2, 1)


def test_without_quorum_the_read_answers_from_the_replica_copy() -> None:
    known = cluster(commits=3, applied=1)
    known.replication.down = "no etcd member answered"  # the probe saw it: no round trip
    consistent(known)
    assert (known.applied, known.replication.asked) == (1, 0)
    sudden = cluster(commits=3, applied=1)
    sudden.replication.down = "now"  # the quorum read itself fails
    consistent(sudden)
    assert sudden.applied == 1


def test_a_replica_that_cannot_catch_up_in_time_refuses_the_read() -> None:
    replica = cluster(commits=3, applied=1)
    taken, done = threading.Event(), threading.Event()

    def commit_in_progress() -> None:  # another thread holds the write lock throughout
        with replica.write_lock:
            taken.set()
            done.wait()

    holder = threading.Thread(target=commit_in_progress)
    holder.start()
    taken.wait()
    try:
        with pytest.raises(DatastoreError) as refused:
            consistent(replica, wait_s=0.01)
    finally:
        done.set()
        holder.join()
    item = refused.value.items[0]
    assert (item.tag, item.app_tag) == ("resource-denied", CLUSTER_READ_TIMEOUT)
    assert "up to 1, not yet 3" in item.message
    assert replica.applied == 1


def test_concurrent_reads_share_quorum_reads_sent_after_they_called() -> None:
    """A caller never gets the answer of a read sent before it called (it might miss a commit
    acknowledged meanwhile); callers waiting together share the next read."""
    sent: list[int] = []
    first_sent, release = threading.Event(), threading.Event()

    def read() -> int | None:
        sent.append(len(sent) + 1)
        if len(sent) == 1:
            first_sent.set()
            release.wait()
        return len(sent)  # the read's number stands for the head it saw

    shared = SharedRead(read)
    answers: dict[str, int | None] = {}

    def call(name: str) -> None:
        answers[name] = shared()

    first = threading.Thread(target=call, args=("a",))
    first.start()
    first_sent.wait()
    later = [threading.Thread(target=call, args=(name,)) for name in ("b", "c", "d")]
    for thread in later:
        thread.start()
    release.set()
    for thread in (first, *later):
        thread.join()
    assert answers["a"] == 1
    assert [answer for name, answer in answers.items() if name != "a" and answer == 1] == []
    assert len(sent) <= 4  # b, c and d sent at most one each
    before = len(sent)
    assert shared() == before + 1  # alone: a read of its own
