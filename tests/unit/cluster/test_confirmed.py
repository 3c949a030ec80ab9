"""The cluster's confirmed commit (RFC 6241 8.4): two replicas' ConfirmedCommits over one core
(as the cluster makes running one) and EtcdConfirmed over a fake etcd that evaluates the
transactions as etcd does (test_cluster_confirmed runs the real ones)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cluster.confirmed import EtcdConfirmed
from controller.cluster.locks import EtcdLocks
from controller.datastore import Core
from controller.datastore.api import SYSTEM, DatastoreName
from controller.errors import CatsError
from controller.model import Schema
from controller.netconf.confirmed import (
    Actor,
    CommitParams,
    ConfirmedCommits,
    _Pending,
    due,
)
from tests.unit.cluster.test_locks import FakeEtcd
from tests.unit.netconf.test_confirmed import TEST_YANG, label, running_label

OWNER = Actor(3, "alice")
OTHER = Actor(1004, "bob")  # a session on replica B


@pytest.fixture(scope="module")
def schema() -> Iterator[Schema]:
    with Schema.for_server([TEST_YANG]) as compiled:
        yield compiled


@pytest.fixture
def core(schema: Schema, tmp_path: Path) -> Iterator[Core]:
    with Core(schema, tmp_path / "state") as opened:
        opened.edit(DatastoreName.RUNNING, [label("before")], SYSTEM)
        yield opened


class Replica:
    """One replica's confirmed commits over the shared etcd (``leads``: it sweeps)."""

    def __init__(self, etcd: FakeEtcd, core: Core, node: str, *, leads: bool = False) -> None:
        self.leading = leads
        self.locks = EtcdLocks(etcd, node)  # type: ignore[arg-type]
        self.store = EtcdConfirmed(etcd, self.locks, lambda: self.leading)  # type: ignore[arg-type]
        self.events: list[str] = []
        self.commits = ConfirmedCommits(core, self.events.append, self.store)
        self.commits.resume()

    def close(self) -> None:
        self.commits.close()
        self.locks.close()


@pytest.fixture
def etcd() -> FakeEtcd:
    return FakeEtcd()


@pytest.fixture
def replicas(etcd: FakeEtcd, core: Core) -> Iterator[tuple[Replica, Replica]]:
    a, b = Replica(etcd, core, "cps1"), Replica(etcd, core, "cps2", leads=True)
    yield a, b
    a.close()
    b.close()


def wait_until(check: object, what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def start(replica: Replica, core: Core, **params: object) -> None:
    core.edit(DatastoreName.CANDIDATE, [label("after")], SYSTEM, session=str(OWNER.session_id))
    replica.commits.commit(OWNER, SYSTEM, CommitParams(confirmed=True, **params))  # type: ignore[arg-type]
    assert running_label(core) == "after"


def test_due() -> None:
    now = 1000.0
    kept = _Pending("{}", OWNER, None, now + 10)
    persisted = _Pending("{}", OWNER, "p", now + 10)
    assert due(kept, holder_alive=True, now=now) is None
    assert due(kept, holder_alive=False, now=now) == "cancel"
    assert due(persisted, holder_alive=False, now=now) is None
    assert due(persisted, holder_alive=False, now=now + 10) == "timeout"
    assert due(kept, holder_alive=True, now=now + 11) == "timeout"


def test_the_document_names_its_node() -> None:
    pending = _Pending("{}", OWNER, "p", 1000.0, "cps1")
    assert _Pending.from_document(pending.document()).node == "cps1"
    assert "node" not in json.loads(_Pending("{}", OWNER, None, 1.0).document())


def test_a_persisted_commit_is_confirmed_from_another_replica(
    replicas: tuple[Replica, Replica], core: Core, etcd: FakeEtcd
) -> None:
    a, b = replicas
    start(a, core, timeout=600, persist="p-1")
    assert b.commits.pending
    with pytest.raises(CatsError, match="persist-id"):
        b.commits.commit(OTHER, SYSTEM, CommitParams())  # a plain commit is no confirmation
    b.commits.commit(OTHER, SYSTEM, CommitParams(persist_id="p-1"))
    assert not a.commits.pending
    assert running_label(core) == "after"
    assert '"confirm-event": "complete"' in b.events[-1]
    assert etcd.keys == {}


def test_a_persisted_commit_is_cancelled_from_another_replica(
    replicas: tuple[Replica, Replica], core: Core
) -> None:
    a, b = replicas
    start(a, core, timeout=600, persist="p-2")
    with pytest.raises(CatsError, match="persist-id"):
        b.commits.cancel(OTHER, "wrong")
    b.commits.cancel(OTHER, "p-2")
    assert running_label(core) == "before"
    assert not a.commits.pending
    with pytest.raises(CatsError, match="no confirmed commit"):
        a.commits.cancel(OWNER, "p-2")  # once


def test_the_leader_rolls_back_a_persisted_commit_whose_holder_is_gone(
    replicas: tuple[Replica, Replica], core: Core
) -> None:
    a, b = replicas
    start(a, core, timeout=1, persist="p-3")
    a.close()  # A stops with its timer: B, leading, sweeps it past its deadline
    wait_until(lambda: not b.commits.pending, "the leader rolls it back")
    assert running_label(core) == "before"
    assert ['"confirm-event": "timeout"' in event for event in b.events] == [True]


def test_a_commit_without_persist_ends_with_its_replicas_lease(
    replicas: tuple[Replica, Replica], core: Core, etcd: FakeEtcd
) -> None:
    a, b = replicas
    start(a, core, timeout=600)
    with pytest.raises(CatsError, match="another session"):
        b.commits.commit(OWNER, SYSTEM, CommitParams())  # same session id, another replica
    assert running_label(core) == "after"
    etcd.expire(a.locks.lease())  # A's replica died
    wait_until(lambda: not b.commits.pending, "the leader rolls it back")
    assert running_label(core) == "before"
    assert '"confirm-event": "cancel"' in b.events[-1]


def test_a_commit_without_persist_ends_with_its_session(
    replicas: tuple[Replica, Replica], core: Core
) -> None:
    a, b = replicas
    b.leading = False
    start(a, core, timeout=600)
    a.commits.session_ended(OTHER)  # another session: nothing
    assert b.commits.pending
    a.commits.session_ended(OWNER)
    assert not b.commits.pending
    assert running_label(core) == "before"


def test_a_second_confirmed_commit_is_refused_anywhere(
    replicas: tuple[Replica, Replica], core: Core
) -> None:
    a, b = replicas
    start(a, core, timeout=600, persist="p-4")
    with pytest.raises(CatsError, match="persist-id"):
        b.commits.commit(OTHER, SYSTEM, CommitParams(confirmed=True))
    b.commits.commit(OTHER, SYSTEM, CommitParams(confirmed=True, timeout=600, persist_id="p-4"))
    assert b.commits.pending  # extended from B, still pending, cancelled back to the backup
    a.commits.cancel(OWNER, "p-4")
    assert running_label(core) == "before"
