"""Commit history in a cluster: every replica keeps every commit under the cluster's number,
with the committing replica's metadata from the record, and the reverse edits it computes
itself; a rollback on one replica undoes a commit of another; a replica that loaded the
snapshot refuses to roll back past it (two real cores on an in-memory log; the functional
test test_cluster_history runs real processes on etcd)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from controller.admin.service import Admin
from controller.audit import RequestInfo, SqliteAudit, SqliteHistory, install, request
from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, Principal, Registrations
from controller.datastore.errors import DatastoreError
from controller.datastore.history import SNAPSHOT_OPERATION, commit_meta, meta_of
from controller.datastore.replication import Record, StaleError, catch_up, follows_on
from controller.datastore.transaction import Txn
from controller.model import Schema
from tests.unit.datastore.conftest import (
    RUNNING,
    TOP,
    create,
    item,
    item_path,
    merge,
)

ALICE, BOB = Principal("alice", recovery=True), Principal("bob", recovery=True)
REST = RequestInfo("restconf", "10.0.0.1", None, "PUT", "add item 2", "two")
NETCONF = RequestInfo("netconf", "10.0.0.2", "7", "edit-config", "add item 3", None)


@dataclass
class Log:
    """The cluster's log in memory (what etcd holds, as JSON); commits up to ``dropped`` are
    only in ``kept`` (the snapshot)."""

    records: list[Record] = field(default_factory=list)
    dropped: int = 0
    kept: Record | None = None

    def commit(self, txid: int, record: Record) -> None:
        if txid != len(self.records) + 1:
            raise StaleError(len(self.records), [])
        self.records.append(json.loads(json.dumps(record)))

    def since(self, txid: int) -> list[Record]:
        return follows_on(txid, self.records[max(txid, self.dropped) :])

    def snapshot(self) -> Record | None:
        return self.kept

    def snapshot_due(self, txid: int) -> bool:
        del txid
        return False

    def offer_snapshot(self, txid: int, document: str) -> None:
        del txid, document

    def last(self) -> int | None:
        return len(self.records)

    def problem(self) -> str | None:
        return None

    def start(self, deliver: Callable[[list[Record]], None]) -> None:
        del deliver

    def close(self) -> None:
        pass


@dataclass
class Replica:
    core: Core
    history: SqliteHistory
    admin: Admin


@pytest.fixture
def replicas(test_schema: Schema, tmp_path: Path) -> Iterator[tuple[Log, Callable[[], Replica]]]:
    """The log and a maker of replicas on it (each with its own state and history)."""
    log = Log()
    made: list[Replica] = []

    def replica() -> Replica:
        folder = tmp_path / f"r{len(made)}"
        history = SqliteHistory(folder, 100)
        settings = CoreSettings(history=history, replication=log, node=f"r{len(made)}")
        core = Core(test_schema, folder / "state", Registrations(), settings=settings)
        made.append(Replica(core, history, Admin(lambda: core, history, None, kept=100)))
        catch_up(core)
        return made[-1]

    yield log, replica
    for one in made:
        one.core.close()
        one.history.close()


def test_the_record_carries_the_request_and_gives_it_back() -> None:
    txn = Txn(RUNNING, ALICE, "5", [])
    meta = commit_meta(txn, REST, "2026-12-02T14:00:00Z")
    assert meta == {
        "time": "2026-12-02T14:00:00Z",
        "transport": "restconf",
        "source": "10.0.0.1",
        "session": "5",  # the transaction's own session wins
        "operation": "PUT",
        "comment": "add item 2",
        "label": "two",
    }
    record = {"txid": 3, "user": "alice", "edits": [], "changed": [], "node": "a", **meta}
    assert meta_of(record) == {**meta, "node": "a"}  # the node: for the audit record
    assert meta_of({"txid": 3}) == {}  # a record of a replica before this change


def test_every_replica_keeps_every_commit_with_its_metadata_and_rolls_back_any(
    replicas: tuple[Log, Callable[[], Replica]],
) -> None:
    _, replica = replicas
    a, b = replica(), replica()
    a.core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
    first = a.core.running.print()
    with request(REST):
        a.core.edit(RUNNING, [create(item_path(2), item(2))], ALICE)
    catch_up(b.core)  # what its watch does
    with request(NETCONF):
        b.core.edit(RUNNING, [create(item_path(3), item(3))], BOB)
    catch_up(a.core)
    listed = a.history.entries(10)
    assert listed == b.history.entries(10)  # numbers, users, times, comments: all the same
    assert [(e.id, e.user, e.transport, e.comment) for e in listed] == [
        (3, "bob", "netconf", "add item 3"),
        (2, "alice", "restconf", "add item 2"),
        (1, "system", "server", None),
    ]
    assert (listed[0].session, listed[1].label, listed[1].source) == ("7", "two", "10.0.0.1")
    b.admin.rollback(SYSTEM, {"commit-id": "1"})  # undoes a's commit and its own
    catch_up(a.core)
    assert a.core.running.print() == b.core.running.print() == first
    assert a.history.entries(1) == b.history.entries(1)
    assert a.history.entries(1)[0].operation == "rollback"


def test_a_replica_that_loaded_the_snapshot_refuses_to_roll_back_past_it(
    replicas: tuple[Log, Callable[[], Replica]],
) -> None:
    log, replica = replicas
    a = replica()
    a.core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
    a.core.edit(RUNNING, [create(item_path(2), item(2))], ALICE)
    log.kept = {"txid": 2, "time": "2026-12-02T14:00:00+00:00", "document": a.core.running.print()}
    log.dropped = 2  # trimmed: a replica starting now loads the snapshot
    c = replica()
    a.core.edit(RUNNING, [create(item_path(3), item(3))], ALICE)
    catch_up(c.core)
    found = [(e.id, e.operation) for e in c.history.entries(10)]
    assert found == [(3, None), (2, SNAPSHOT_OPERATION)]
    with pytest.raises(DatastoreError, match="snapshot"):
        c.admin.rollback(SYSTEM, {"commit-id": "1"})
    with pytest.raises(DatastoreError, match="snapshot"):
        c.admin.compare(SYSTEM, {"source": "1"})
    c.admin.rollback(SYSTEM, {"commit-id": "2"})  # back to the snapshot itself: fine
    catch_up(a.core)
    assert "i3" not in a.core.running.print()
    assert a.core.running.print() == c.core.running.print()


def test_every_replica_audits_every_commit_as_the_replica_that_made_it(
    replicas: tuple[Log, Callable[[], Replica]], tmp_path: Path
) -> None:
    """The audit record of a commit made on r0 is on r1 too, the same record (time, user,
    transport, detail) naming r0; a replica applying the log again (a restart) does not
    record it twice."""
    _, replica = replicas
    on_a, on_b = SqliteAudit(tmp_path / "audit-a", 100), SqliteAudit(tmp_path / "audit-b", 100)
    try:
        a, b = replica(), replica()
        install(on_a)
        with request(REST):
            a.core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], ALICE)
        install(on_b)
        catch_up(b.core)  # what its watch does
        made, applied = on_a.recent(10), on_b.recent(10)
        assert [(r.event, r.user, r.commit_id, r.node) for r in applied] == [
            ("commit", "alice", 1, "r0")
        ]
        assert (applied[0].transport, applied[0].source) == ("restconf", "10.0.0.1")
        assert replace(applied[0], id=0) == replace(made[0], id=0)
        replica()  # starts on b's audit: applies the log again
        assert len(on_b.recent(10)) == 1
    finally:
        install(None)
        on_a.close()
        on_b.close()
