"""The cluster's lock of running: the core's Locks over a SharedLock, EtcdLocks and the guard
of a commit over a fake etcd that evaluates transactions as etcd does (the functional test
test_cluster_locks runs the real ones), and cluster-unique session ids."""

from __future__ import annotations

import base64
import json
import typing
from dataclasses import dataclass, field
from typing import Any

import pytest

from controller.cluster.etcd import Etcd, KeyValue, Unavailable
from controller.cluster.locks import EtcdLocks, SessionIds
from controller.cluster.replication import EtcdReplication
from controller.cluster.startup import EtcdStartup
from controller.datastore.api import DatastoreName
from controller.datastore.errors import DatastoreError
from controller.datastore.locks import Locks
from controller.datastore.replication import PAST_LOCKS, SESSION, StaleError

RUNNING, CANDIDATE = DatastoreName.RUNNING, DatastoreName.CANDIDATE
STARTUP = DatastoreName.STARTUP


@dataclass
class Stored:
    value: bytes
    create: int
    mod: int
    version: int
    lease: int


@dataclass
class FakeEtcd:
    """One etcd member's keys, leases and transactions (the fields the client uses)."""

    keys: dict[str, Stored] = field(default_factory=dict)
    revision: int = 1
    leases: dict[int, bool] = field(default_factory=dict)
    down: bool = False

    def _check(self) -> None:
        if self.down:
            raise Unavailable("down")

    def get(self, key: str) -> KeyValue | None:
        self._check()
        found = self.keys.get(key)
        return None if found is None else KeyValue(key, found.value, found.mod, found.lease)

    def grant(self, ttl: int) -> int:
        self._check()
        lease = len(self.leases) + 1
        self.leases[lease] = True
        return lease

    def keep_alive(self, lease: int) -> int:
        self._check()
        return 5 if self.leases.get(lease) else 0

    def revoke(self, lease: int) -> None:
        self.expire(lease)

    def expire(self, lease: int) -> None:
        self.leases[lease] = False
        for key in [k for k, v in self.keys.items() if v.lease == lease]:
            del self.keys[key]
        self.revision += 1

    def _holds(self, compare: dict[str, Any]) -> bool:
        found = self.keys.get(base64.b64decode(compare["key"]).decode())
        target = compare["target"]
        if target == "CREATE":
            return (found.create if found else 0) == int(compare["create_revision"])
        if target == "VERSION":
            return (found.version if found else 0) == int(compare["version"])
        if target == "MOD":
            return (found.mod if found else 0) == int(compare["mod_revision"])
        raise AssertionError(target)

    def txn(
        self,
        compare: list[dict[str, Any]],
        success: list[dict[str, Any]],
        failure: list[dict[str, Any]] | None = None,
    ) -> tuple[bool, int, list[dict[str, Any]]]:
        self._check()
        held = all(self._holds(item) for item in compare)
        responses: list[dict[str, Any]] = []
        wrote = False
        for operation in success if held else failure or []:
            ((kind, body),) = operation.items()
            key = base64.b64decode(body["key"]).decode()
            if kind == "request_put":
                wrote = True
                lease = int(body.get("lease", 0))
                if lease and not self.leases.get(lease):
                    raise Unavailable("etcdserver: requested lease not found")
                old = self.keys.get(key)
                value = base64.b64decode(body["value"])
                create = old.create if old else self.revision + 1
                version = old.version + 1 if old else 1
                self.keys[key] = Stored(value, create, self.revision + 1, version, lease)
                responses.append({"response_put": {}})
            elif kind == "request_delete_range":
                wrote = wrote or key in self.keys
                self.keys.pop(key, None)
                responses.append({"response_delete_range": {}})
            else:
                found = self.keys.get(key)
                kvs = []
                if found is not None:
                    encoded = base64.b64encode(found.value).decode()
                    kvs = [{"value": encoded, "version": found.version, "mod_revision": found.mod}]
                responses.append({"response_range": {"kvs": kvs}})
        if wrote:
            self.revision += 1
        return held, self.revision, responses


class FakeShared:
    """A SharedLock held elsewhere by session ``remote`` (None: free)."""

    def __init__(self, remote: str | None = None) -> None:
        self.remote = remote
        self.mine_: str | None = None

    def acquire(self, session: str) -> str | None:
        holder = self.mine_ or self.remote
        if holder is None:
            self.mine_ = session
        return holder

    def release(self, session: str) -> bool:
        if self.mine_ != session:
            return False
        self.mine_ = None
        return True

    def mine(self) -> str | None:
        return self.mine_

    def holder(self) -> str | None:
        return self.mine_ or self.remote


def test_running_is_locked_in_the_cluster_and_candidate_here() -> None:
    shared = FakeShared(remote="1001")
    locks = Locks({RUNNING: shared})
    with pytest.raises(DatastoreError) as caught:
        locks.lock(RUNNING, "7")
    assert caught.value.items[0].tag == "lock-denied"
    assert caught.value.items[0].info == (("session-id", "1001"),)
    assert locks.holders() == {RUNNING: "1001"}  # monitoring names the other replica's
    locks.check(RUNNING, "7")  # the commit's guard refuses it, not this replica's check
    shared.remote = None
    locks.lock(RUNNING, "7")
    locks.lock(CANDIDATE, "7")
    assert shared.mine_ == "7"
    with pytest.raises(DatastoreError):
        locks.check(RUNNING, "8")
    with pytest.raises(DatastoreError):
        locks.unlock(RUNNING, "8")
    assert set(locks.release("7")) == {RUNNING, CANDIDATE}
    assert shared.mine_ is None
    assert locks.holders() == {}


def test_a_lock_is_one_key_taken_only_when_absent() -> None:
    etcd = FakeEtcd()
    a, b = EtcdLocks(etcd, "a"), EtcdLocks(etcd, "b")  # type: ignore[arg-type]
    assert a.acquire("1") is None
    assert b.acquire("1001") == "1"  # the holder's session, on the other replica
    assert a.acquire("2") == "1"
    assert (a.mine(), b.mine(), b.holder()) == ("1", None, "1")
    key = etcd.keys["/cats/locks/running"]
    assert json.loads(key.value)["node"] == "a"
    assert key.lease  # bound to a's lease
    assert not b.release("1")  # not b's
    assert a.release("1")
    assert "/cats/locks/running" not in etcd.keys
    assert b.acquire("1001") is None
    a.close()
    b.close()


def test_a_lock_goes_with_its_replicas_lease() -> None:
    etcd = FakeEtcd()
    a, b = EtcdLocks(etcd, "a"), EtcdLocks(etcd, "b")  # type: ignore[arg-type]
    assert a.acquire("1") is None
    etcd.expire(etcd.keys["/cats/locks/running"].lease)  # a died, or was stopped past its TTL
    assert b.acquire("1001") is None
    a._drop_lease()  # what a's keep-alive does when it finds its lease gone
    assert a.mine() is None
    assert not a.release("1")
    assert b.mine() == "1001"  # a's session did not delete b's lock


def test_a_lease_expired_unnoticed_is_granted_anew() -> None:
    etcd = FakeEtcd()
    a = EtcdLocks(etcd, "a")  # type: ignore[arg-type]
    assert a.acquire("1") is None
    assert a.release("1")
    etcd.expire(1)  # the process was paused past its TTL: its keep-alive has not run since
    assert a.acquire("2") is None
    assert etcd.keys["/cats/locks/running"].lease == 2
    etcd.down = True
    a.release("2")  # not deleted: the lease, no longer kept alive, ends it
    with pytest.raises(DatastoreError):
        a.acquire("3")
    a.close()


def _replica(etcd: FakeEtcd, node: str) -> EtcdReplication:
    replication = EtcdReplication(etcd, node, keep=0)  # type: ignore[arg-type]
    replication.locks = EtcdLocks(etcd, node)  # type: ignore[arg-type]
    return replication


def _record(txid: int, session: str | None, *, past_locks: bool = False) -> dict[str, object]:
    return {"txid": txid, "edits": [], "changed": ["/x"], SESSION: session, PAST_LOCKS: past_locks}


def test_a_commit_is_guarded_on_the_lock() -> None:
    etcd = FakeEtcd()
    a, b = _replica(etcd, "a"), _replica(etcd, "b")
    a.commit(1, _record(1, None))  # no lock: anyone commits
    assert a.locks is not None
    assert a.locks.acquire("1") is None
    for session in (None, "1001", "1"):  # RESTCONF, another session, the same id elsewhere
        with pytest.raises(DatastoreError) as caught:
            b.commit(2, _record(2, session))
        assert caught.value.items[0].tag == "lock-denied"
        assert caught.value.items[0].info == (("session-id", "1"),)
    with pytest.raises(DatastoreError):
        a.commit(2, _record(2, "2"))  # another session of the holder's replica
    assert etcd.keys["/cats/config/head"].version == 1  # none of them committed
    a.commit(2, _record(2, "1"))  # the holder
    with pytest.raises(StaleError):
        a.commit(2, _record(2, "1"))  # the lock is no excuse for a stale commit
    b.commit(3, _record(3, None, past_locks=True))  # the server's own rollback
    logged = json.loads(etcd.keys["/cats/config/log/00000000000000000002"].value)
    assert SESSION not in logged
    assert PAST_LOCKS not in logged
    etcd.expire(etcd.keys["/cats/locks/running"].lease)
    with pytest.raises(DatastoreError) as lost:
        a.commit(4, _record(4, "1"))
    assert lost.value.items[0].tag == "in-use"
    assert "lost the lock" in lost.value.items[0].message


def test_session_ids_are_unique_across_replicas() -> None:
    etcd = FakeEtcd()
    a, b = SessionIds(etcd, block=4), SessionIds(etcd, block=4)  # type: ignore[arg-type]
    a.prime()
    b.prime()
    drawn = [a(), a(), b(), a(), b(), b(), b(), a(), a()]
    assert 0 not in drawn
    assert len(set(drawn)) == len(drawn)
    assert drawn[:4] == [1, 2, 5, 3]


def test_session_ids_go_on_without_etcd() -> None:
    etcd = FakeEtcd()
    ids = SessionIds(etcd, block=4)  # type: ignore[arg-type]
    ids.prime()
    etcd.down = True
    assert [ids() for _ in range(6)] == [1, 2, 3, 4, 5, 6]  # past the block: logged
    etcd.down = False
    assert ids() > 6  # a block drawn again, above the ids given


def test_a_write_of_the_clusters_startup_is_guarded_on_its_lock() -> None:
    """EtcdStartup.put compares the lock of startup in its transaction: refused lock-denied
    naming the holder on another replica; taken by the holder, and by anyone once free."""
    etcd = FakeEtcd()
    fake = typing.cast(Etcd, etcd)
    locks_a, locks_b = EtcdLocks(fake, "a", name="startup"), EtcdLocks(fake, "b", name="startup")
    on_a, on_b = EtcdStartup(fake, "a", locks_a), EtcdStartup(fake, "b", locks_b)
    record: dict[str, object] = {"document": "{}", "user": "admin", "time": "t"}
    try:
        assert locks_a.acquire("5") is None
        assert "/cats/locks/startup" in etcd.keys
        with pytest.raises(DatastoreError) as caught:
            on_b.put(0, record, "1001")
        assert caught.value.items[0].tag == "lock-denied"
        assert caught.value.items[0].info == (("session-id", "5"),)
        assert "/cats/startup" not in etcd.keys  # nothing written
        first = on_a.put(0, record, "5")  # the holder writes
        assert locks_a.release("5")
        assert on_b.put(first, record, None) > first  # free: a RESTCONF write is taken
    finally:
        locks_a.close()
        locks_b.close()


def test_running_and_startup_each_have_their_cluster_lock() -> None:
    running, startup = FakeShared(), FakeShared(remote="1001")
    locks = Locks({RUNNING: running, STARTUP: startup})
    locks.lock(RUNNING, "7")
    with pytest.raises(DatastoreError) as caught:
        locks.lock(STARTUP, "7")
    assert caught.value.items[0].info == (("session-id", "1001"),)
    assert locks.holders() == {RUNNING: "7", STARTUP: "1001"}
    startup.remote = None
    locks.lock(STARTUP, "7")
    assert set(locks.release("7")) == {RUNNING, STARTUP}
    assert locks.holders() == {}
