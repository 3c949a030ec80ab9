"""Values the replicas share (controller.cluster.records) over the fake etcd of test_locks,
which evaluates transactions as etcd does; test_cluster_sessions runs the real one."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from controller.cluster.etcd import KeyValue, prefix_end
from controller.cluster.records import EtcdRecords
from controller.errors import CatsError
from tests.unit.cluster.test_locks import FakeEtcd

PREFIX = "/cats/agent-sessions/"


@dataclass
class WatchedEtcd(FakeEtcd):
    """The fake etcd with a range of a prefix and a watch that delivers ``events``."""

    events: list[KeyValue] = field(default_factory=list)

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        assert path == "/kv/range"
        start, end = (base64.b64decode(body[k]).decode() for k in ("key", "range_end"))
        kvs = [
            {
                "key": base64.b64encode(key.encode()).decode(),
                "value": base64.b64encode(stored.value).decode(),
                "mod_revision": stored.mod,
            }
            for key, stored in sorted(self.keys.items())
            if start <= key < end
        ]
        return {"kvs": kvs, "header": {"revision": self.revision}}

    def watch(
        self, prefix: str, start_revision: int, stop: threading.Event
    ) -> Iterator[KeyValue | None]:
        assert prefix_end(prefix) > prefix
        del start_revision
        yield from self.events
        stop.wait()


@dataclass
class Follower:
    """One replica's records and what it was told."""

    records: EtcdRecords
    told: list[tuple[str, bytes]] = field(default_factory=list)
    more: threading.Condition = field(default_factory=threading.Condition)

    def changed(self, name: str, value: bytes) -> None:
        with self.more:
            self.told.append((name, value))
            self.more.notify_all()

    def wait_for(self, count: int) -> list[tuple[str, bytes]]:
        """What it was told, once it was told ``count`` values (5 s at most)."""
        with self.more:
            self.more.wait_for(lambda: len(self.told) >= count, timeout=5)
            return list(self.told)


def _replica(etcd: WatchedEtcd) -> Follower:
    follower = Follower(EtcdRecords(etcd, PREFIX))  # type: ignore[arg-type]
    follower.records.follow(follower.changed)
    return follower


@pytest.fixture
def etcd() -> WatchedEtcd:
    return WatchedEtcd()


def test_a_put_over_a_change_not_seen_is_refused_and_the_newer_value_adopted(
    etcd: WatchedEtcd,
) -> None:
    a, b = _replica(etcd), _replica(etcd)
    try:
        assert a.records.put("s-1", b"one")
        assert not b.records.put("s-1", b"two")  # B never saw "one": it takes it instead
        assert b.told == [("s-1", b"one")]
        assert etcd.get(PREFIX + "s-1").value == b"one"  # type: ignore[union-attr]
        assert b.records.put("s-1", b"three")  # now B has seen it
        assert not a.records.put("s-1", b"four")
        assert a.told == [("s-1", b"three")]
    finally:
        a.records.close()
        b.records.close()


def test_a_deleted_value_is_not_put_back_by_a_replica_that_had_it(etcd: WatchedEtcd) -> None:
    a, b = _replica(etcd), _replica(etcd)
    try:
        assert a.records.put("s-1", b"one")
        assert not b.records.put("s-1", b"x")  # B adopts "one"
        a.records.delete("s-1")
        assert not b.records.put("s-1", b"two")
        assert etcd.get(PREFIX + "s-1") is None
    finally:
        a.records.close()
        b.records.close()


def test_follow_reads_every_value_then_takes_only_newer_events(etcd: WatchedEtcd) -> None:
    writer = EtcdRecords(etcd, PREFIX)  # type: ignore[arg-type]
    assert writer.put("s-1", b"one")
    first = etcd.keys[PREFIX + "s-1"].mod
    assert writer.put("s-2", b"two")
    etcd.events = [
        KeyValue(PREFIX + "s-1", b"one", first),  # already read: nothing
        KeyValue(PREFIX + "s-1", b"newer", etcd.revision + 1),
    ]
    follower = Follower(EtcdRecords(etcd, PREFIX))  # type: ignore[arg-type]
    follower.records.follow(follower.changed)
    try:
        assert follower.wait_for(3) == [("s-1", b"one"), ("s-2", b"two"), ("s-1", b"newer")]
    finally:
        follower.records.close()


def test_a_put_etcd_does_not_take_is_a_cats_error(etcd: WatchedEtcd) -> None:
    records = EtcdRecords(etcd, PREFIX)  # type: ignore[arg-type]
    etcd.down = True
    with pytest.raises(CatsError):
        records.put("s-1", b"one")
