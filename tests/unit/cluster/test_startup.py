"""The cluster's startup: a copy-config to startup on one replica is every replica's startup;
a write made on a version another replica replaced is refused and changes nothing; a replica
that starts takes the cluster's startup, never its own file; and the record as etcd holds it
(two real cores on an in-memory store; the functional test test_cluster_history runs real
processes on etcd)."""

from __future__ import annotations

import base64
import json
import threading
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from controller.cluster.etcd import Etcd, KeyValue
from controller.cluster.startup import EtcdStartup, changed_meanwhile, encoded, record_of
from controller.datastore import Core, CoreSettings
from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Edit,
    EditOperation,
    Principal,
    Registrations,
)
from controller.datastore.datapath import ROOT
from controller.datastore.errors import DatastoreError, refuse
from controller.datastore.replication import Record
from controller.model import Schema
from tests.unit.datastore.conftest import (
    RUNNING,
    TOP,
    create,
    item,
    item_path,
    merge,
    read_json,
)

STARTUP = DatastoreName.STARTUP
ALICE = Principal("alice", recovery=True)


@dataclass
class Shared:
    """The cluster's startup in memory (what etcd holds); with ``lagging``, reads give the
    version before the last, as a replica's view a write overtook."""

    versions: list[Record] = field(default_factory=list)
    lagging: bool = False
    delivered: list[Callable[[Record], None]] = field(default_factory=list)

    def put(self, base: int, record: Record, session: str | None = None) -> int:
        if base != len(self.versions):
            raise refuse("in-use", "startup was written on another replica meanwhile")
        kept = {**json.loads(json.dumps(record)), "revision": len(self.versions) + 1}
        self.versions.append(kept)
        return len(self.versions)

    def read(self) -> Record | None:
        found = self.versions[:-1] if self.lagging else self.versions
        return found[-1] if found else None

    def start(self, deliver: Callable[[Record], None]) -> None:
        self.delivered.append(deliver)

    def close(self) -> None:
        pass


@pytest.fixture
def replicas(test_schema: Schema, tmp_path: Path) -> Iterator[tuple[Shared, Callable[[], Core]]]:
    """The cluster's startup and a maker of replicas on it (each with its state directory)."""
    shared = Shared()
    made: list[Core] = []

    def replica() -> Core:
        folder = tmp_path / f"r{len(made)}" / "state"
        core = Core(test_schema, folder, Registrations(), settings=CoreSettings(startup=shared))
        core.follow()
        made.append(core)
        return core

    yield shared, replica
    for core in made:
        core.close()


def test_a_copy_to_startup_is_every_replicas_startup(
    replicas: tuple[Shared, Callable[[], Core]],
) -> None:
    shared, replica = replicas
    a, b = replica(), replica()
    assert read_json(a, TOP, STARTUP) is None  # the cluster has none yet: empty
    a.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
    a.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM)
    a.copy_config(RUNNING, STARTUP, ALICE)
    assert (shared.versions[-1]["user"], shared.versions[-1]["revision"]) == ("alice", 1)
    b.consistent(STARTUP)  # a client's read: the cluster's version first
    assert read_json(b, TOP, STARTUP) == read_json(a, TOP, RUNNING) is not None
    b.edit(STARTUP, [create(item_path(3), item(3))], SYSTEM)  # an edit of startup on B
    for deliver in shared.delivered:  # what each replica's watch does
        deliver(shared.versions[-1])
    assert read_json(a, TOP, STARTUP) == read_json(b, TOP, STARTUP)
    assert read_json(a, item_path(3), STARTUP) is not None
    assert read_json(a, item_path(3), RUNNING) is None  # running is not startup
    c = replica()  # a replica that starts takes the cluster's startup
    assert read_json(c, TOP, STARTUP) == read_json(a, TOP, STARTUP)
    c.edit(STARTUP, [Edit(EditOperation.REMOVE, ROOT)], SYSTEM)  # <delete-config> on C
    for deliver in shared.delivered:
        deliver(shared.versions[-1])
    assert read_json(a, TOP, STARTUP) == read_json(b, TOP, STARTUP) == read_json(c, TOP, STARTUP)
    assert read_json(a, item_path(2), STARTUP) is None


def test_a_write_on_a_replaced_version_is_refused_and_changes_nothing(
    replicas: tuple[Shared, Callable[[], Core]],
) -> None:
    shared, replica = replicas
    a, b = replica(), replica()
    a.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
    a.copy_config(RUNNING, STARTUP, SYSTEM)
    b.consistent(STARTUP)
    before = read_json(b, TOP, STARTUP)
    a.edit(STARTUP, [create(item_path(4), item(4))], SYSTEM)  # B has not seen this one
    shared.lagging = True
    with pytest.raises(DatastoreError, match="another replica"):
        b.edit(STARTUP, [create(item_path(5), item(5))], SYSTEM)
    assert read_json(b, TOP, STARTUP) == before  # undone
    assert len(shared.versions) == 2
    shared.lagging = False
    b.edit(STARTUP, [create(item_path(5), item(5))], SYSTEM)
    for deliver in shared.delivered:
        deliver(shared.versions[-1])
    assert read_json(a, TOP, STARTUP) == read_json(b, TOP, STARTUP)
    assert read_json(a, item_path(4), STARTUP) is not None


def test_a_copy_from_startup_copies_the_clusters(
    replicas: tuple[Shared, Callable[[], Core]],
) -> None:
    """A copy-config from startup on a replica whose watch has not brought the last version
    yet copies that version (restoring the saved configuration on any replica)."""
    _, replica = replicas
    a, b = replica(), replica()
    a.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
    a.edit(RUNNING, [create(item_path(6), item(6))], SYSTEM)
    a.copy_config(RUNNING, STARTUP, SYSTEM)
    b.copy_config(STARTUP, RUNNING, SYSTEM)  # b's running was empty, and its watch is idle
    assert read_json(b, item_path(6), RUNNING) is not None


def test_a_replica_neither_reads_nor_writes_its_own_startup_file(
    test_schema: Schema, tmp_path: Path
) -> None:
    """The startup of a server that ran alone in the state directory is not the cluster's:
    a replica ignores it and leaves it as it is (for a start without --cluster)."""
    folder = tmp_path / "state"
    with Core(test_schema, folder) as alone:
        alone.edit(RUNNING, [merge(TOP, {"pool": [{"name": "alone"}]})], SYSTEM)
        alone.copy_config(RUNNING, STARTUP, SYSTEM)
    files = {path.name: path.read_bytes() for path in folder.iterdir() if "startup" in path.name}
    assert files
    shared = Shared()
    with Core(test_schema, folder, settings=CoreSettings(startup=shared)) as replica:
        replica.follow()
        assert read_json(replica, TOP, STARTUP) is None
        replica.edit(STARTUP, [merge(TOP, {"pool": [{"name": "cluster"}]})], SYSTEM)
    assert {p.name: p.read_bytes() for p in folder.iterdir() if "startup" in p.name} == files
    assert "cluster" in str(shared.versions[-1]["document"])


def test_the_record_as_etcd_holds_it() -> None:
    """The value carries the document and who wrote it, never the revision (etcd's own);
    read back, the key's revision is the record's; a refusal names who wrote it."""
    record: Record = {"document": "{}", "user": "alice", "time": "2026-12-02T16:00:00Z"}
    value = encoded({**record, "revision": 3}, "cps1")
    assert json.loads(value) == {**record, "node": "cps1"}
    back = record_of(KeyValue("/cats/startup", value.encode(), 9))
    assert back == {**record, "node": "cps1", "revision": 9}
    with pytest.raises(ValueError, match="no document"):
        record_of(KeyValue("/cats/startup", b'{"user": "x"}', 9))

    kv = {"key": base64.b64encode(b"/cats/startup").decode(), "mod_revision": "9"}
    kv["value"] = base64.b64encode(value.encode()).decode()
    refusal = changed_meanwhile([{"response_range": {"kvs": [kv]}}])
    assert "(by alice on cps1)" in refusal
    assert "retry" in changed_meanwhile([])


@dataclass
class WatchedKey:
    """An etcd watch of one key that yields the given values, then waits for its stop."""

    values: list[KeyValue]

    def watch(self, key: str, start: int, stop: threading.Event) -> Iterator[KeyValue | None]:
        while self.values:
            yield self.values.pop(0)
        stop.wait()


def test_a_value_no_replica_wrote_is_skipped_and_the_watch_goes_on() -> None:
    record: Record = {"document": "{}", "user": "alice", "time": "t"}
    good = encoded(record, "cps1").encode()
    watched = WatchedKey(
        [
            KeyValue("/cats/startup", b"not json", 5),
            KeyValue("/cats/startup", b'{"user": "x"}', 6),
            KeyValue("/cats/startup", good, 7),
        ]
    )
    startup = EtcdStartup(typing.cast(Etcd, watched), "cps2")
    delivered: list[Record] = []
    arrived = threading.Event()

    def deliver(found: Record) -> None:
        delivered.append(found)
        arrived.set()

    startup.start(deliver)
    try:
        assert arrived.wait(30)
        assert [found["revision"] for found in delivered] == [7]
        assert startup._thread is not None
        assert startup._thread.is_alive()  # the bad values ended nothing
    finally:
        startup.close()
