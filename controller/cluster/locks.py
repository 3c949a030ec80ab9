"""The NETCONF locks of running and startup, held across the cluster, and cluster-unique
session ids.

A lock is one etcd key, ``locks/running`` or ``locks/startup`` under the cluster's prefix
(JSON: node, session, time). A replica takes it for one of its sessions with one transaction:
*if* the key does not exist (its ``create_revision`` is 0) *then* put it, bound to this
replica's lock lease, which the replica keeps alive; else the holder is read in the same
transaction and the lock is refused ``lock-denied`` naming it. Unlock, and the end of the
session (close-session, a dropped connection, kill-session), delete the key, guarded on the
``create_revision`` the replica took it with (a lock it lost, and someone else's since, are
never deleted). When the replica dies its lease expires and etcd deletes the key: RFC 6241 7.5
releases the lock of a session that ends, and a session ends with its replica.

Every commit of running, and every write of the cluster's startup (:mod:`.startup`), is
guarded on its datastore's key in its own transaction (:meth:`EtcdLocks.guard`): the writing
session's lock (its ``create_revision``), or no lock at all, so that no write lands while
another session holds the lock, on any replica, and no check can race the write.

Session ids (RFC 6241 8.1) are unique across the cluster (:class:`SessionIds`): each replica
draws blocks of ids from one etcd counter, so that ``lock-denied``'s ``session-id`` names one
session, which ``kill-session`` on any replica reaches (:mod:`.kills`).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from controller.cluster.etcd import Etcd, Unavailable, encode, equal
from controller.datastore.replication import unavailable

LOG = logging.getLogger("catsctl.cluster")
#: The lease of a replica's locks: how long a lock outlives its replica. It is kept alive every
#: quarter of it; a replica that cannot refresh it (etcd unreachable, the process stopped past
#: it) loses its lock, and a commit of its session is refused from then on.
LOCK_TTL_S = 5
#: Session ids a replica draws from the cluster's counter at once.
ID_BLOCK = 1000


class EtcdLocks:
    """The cluster's lock of one datastore (``name``) as one replica takes, holds and
    releases it."""

    def __init__(
        self,
        etcd: Etcd,
        node: str,
        prefix: str = "/cats/",
        ttl: int = LOCK_TTL_S,
        name: str = "running",
    ) -> None:
        self.etcd = etcd
        self.node = node
        self.name = name
        self.key = f"{prefix}locks/{name}"
        self.ttl = ttl
        self._lock = threading.Lock()
        self._mine: tuple[str, int] | None = None  # this replica's holder: session, revision
        self._lease = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: Why etcd cannot be reached now, or None (set by the membership: the commit log's
        #: probe): :meth:`holder` then answers at once instead of waiting for etcd's timeout.
        self.problem: Callable[[], str | None] = lambda: None

    # ------------------------------------------------------------------ SharedLock

    def acquire(self, session: str) -> str | None:
        """Take the lock for ``session`` if no session holds it anywhere; else its holder."""
        with self._lock:
            if self._mine is not None:
                return self._mine[0]
            for attempt in range(2):
                try:
                    return self._acquire(session)
                except Unavailable as exc:
                    self._lease = 0  # it holds no key: a new one is granted next time
                    if attempt or "lease not found" not in str(exc):
                        raise unavailable(str(exc)) from exc
                    # it expired before the keep-alive found it (the process was paused)
            raise AssertionError("unreachable")

    def _acquire(self, session: str) -> str | None:
        """One transaction taking the lock (the caller holds ``_lock``)."""
        lease = self._lease_now()
        value = {"node": self.node, "session": session, "time": time.time()}
        put = {"key": encode(self.key), "value": encode(json.dumps(value)), "lease": str(lease)}
        read = {"request_range": {"key": encode(self.key)}}
        absent = equal(self.key, "CREATE", 0)
        won, revision, responses = self.etcd.txn([absent], [{"request_put": put}], [read])
        if won:
            self._mine = (session, revision)
            LOG.info("cluster: session %s of %s locked %s", session, self.node, self.name)
            return None
        return holder_of(responses) or "0"

    def release(self, session: str) -> bool:
        """Delete the key if ``session`` holds the lock (as this replica took it)."""
        with self._lock:
            if self._mine is None or self._mine[0] != session:
                return False
            _, revision = self._mine
            self._mine = None
        delete = {"request_delete_range": {"key": encode(self.key)}}
        try:
            self.etcd.txn([equal(self.key, "CREATE", revision)], [delete])
        except Unavailable as exc:  # the lease, no longer kept alive for it, ends it
            LOG.warning("cluster: the lock of session %s not deleted: %s", session, exc)
            self._drop_lease()
        return True

    def mine(self) -> str | None:
        """This replica's session holding the lock, or None."""
        with self._lock:
            return None if self._mine is None else self._mine[0]

    def holder(self) -> str | None:
        """The session holding the lock anywhere (one etcd read), or None (also when etcd
        cannot be reached)."""
        if self.problem() is not None:
            return None
        try:
            found = self.etcd.get(self.key)
        except Unavailable:
            return None
        return None if found is None else _session(found.value)

    # ------------------------------------------------------------------ commits

    def guard(self, session: str | None) -> dict[str, Any]:
        """The comparison a commit of ``session`` makes in its etcd transaction: the lock is
        the one ``session`` took here, or there is none."""
        with self._lock:
            mine = self._mine
        if mine is not None and mine[0] == session:
            return equal(self.key, "CREATE", mine[1])
        return equal(self.key, "CREATE", 0)

    def read(self) -> dict[str, Any]:
        """The read a refused commit makes (its failure branch): who holds the lock."""
        return {"request_range": {"key": encode(self.key)}}

    # ------------------------------------------------------------------ the lease

    def lease(self) -> int:
        """This replica's lock lease, which other keys that end with it are put on (a
        confirmed commit's holder, :mod:`.confirmed`)."""
        with self._lock:
            return self._lease_now()

    def lease_lost(self) -> None:
        """The lease was found expired: a new one is granted next time."""
        self._drop_lease()

    def _lease_now(self) -> int:
        """This replica's lock lease (granted once, then kept alive; the caller holds the
        lock)."""
        if not self._lease:
            self._lease = self.etcd.grant(self.ttl)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._keep, name="cluster-locks", daemon=True
                )
                self._thread.start()
        return self._lease

    def _keep(self) -> None:
        while not self._stop.wait(self.ttl / 4):
            with self._lock:
                lease = self._lease
            if not lease:
                continue
            try:
                alive = self.etcd.keep_alive(lease) > 0
            except Unavailable as exc:
                LOG.warning("cluster: cannot refresh the lock lease: %s", exc)
                continue  # it lives on until its TTL; a lost one is found on the next round
            if not alive:
                self._drop_lease()

    def _drop_lease(self) -> None:
        with self._lock:
            if self._mine is not None:
                LOG.warning(
                    "cluster: the lock lease of %s expired: session %s lost the lock of %s",
                    self.node,
                    self._mine[0],
                    self.name,
                )
            self._lease, self._mine = 0, None

    def close(self) -> None:
        """Stop; revoke the lease, which releases a lock held here at once."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        with self._lock:
            lease, self._lease, self._mine = self._lease, 0, None
        if lease:
            try:
                self.etcd.revoke(lease)
            except Unavailable as exc:
                LOG.warning("cluster: the lock lease was not revoked: %s", exc)


class SessionIds:
    """NETCONF session ids unique across the cluster: blocks of :data:`ID_BLOCK` drawn from
    one etcd key, whose version counts the blocks drawn (one transaction per block).

    The first block is drawn when the replica joins (:meth:`prime`) and the next one in the
    background once half of the current one is used, so that a session starts without an etcd
    request, also while etcd has no quorum (reads go on then). Should a block run out while no
    next one could be drawn, the ids go on past its end (logged): such an id may be another
    replica's too, which names a lock's holder ambiguously but lets no commit through (the
    guard compares the lock's revision, not its session id)."""

    def __init__(self, etcd: Etcd, prefix: str = "/cats/", block: int = ID_BLOCK) -> None:
        self.etcd = etcd
        self.key = f"{prefix}netconf/session-id-blocks"
        self.block = block
        self._lock = threading.Lock()
        self._next = 1
        self._end = 0  # no block yet
        self._spare: int | None = None  # the next block, drawn ahead
        self._drawing = False

    def prime(self) -> None:
        """Draw the first block now (at join; if etcd cannot be reached, on the first id)."""
        try:
            number = self._draw()
        except Unavailable as exc:
            LOG.warning("cluster: no block of NETCONF session ids drawn yet: %s", exc)
            return
        with self._lock:
            self._next, self._end = number * self.block + 1, (number + 1) * self.block

    def __call__(self) -> int:
        """The next id (never 0)."""
        with self._lock:
            if self._next >= self._end:
                self._refill()
            elif self._end - self._next < self.block // 2 and not self._ahead():
                self._drawing = True  # half used: the next block is drawn meanwhile
                threading.Thread(target=self._draw_spare, daemon=True).start()
            found, self._next = self._next, self._next + 1
            return found

    def _refill(self) -> None:
        """The next block (the caller holds the lock): the spare one, else one drawn now;
        never one below the ids given already (past a block's end, while etcd was away)."""
        spare, self._spare = self._spare, None
        for _ in range(100):
            if spare is None:
                try:
                    spare = self._draw()
                except Unavailable:
                    break
            if spare * self.block + 1 >= self._next:
                self._next, self._end = spare * self.block + 1, (spare + 1) * self.block
                return
            spare = None
        LOG.warning("cluster: NETCONF session id %d is drawn from no block (etcd)", self._next)

    def _ahead(self) -> bool:
        """Whether the next block is drawn, or being drawn (the caller holds the lock)."""
        return self._spare is not None or self._drawing

    def _draw_spare(self) -> None:
        try:
            spare: int | None = self._draw()
        except Unavailable as exc:
            LOG.info("cluster: the next block of session ids not drawn yet: %s", exc)
            spare = None
        with self._lock:
            self._spare, self._drawing = spare, False

    def _draw(self) -> int:
        put = {"request_put": {"key": encode(self.key), "value": encode("")}}
        read = {"request_range": {"key": encode(self.key)}}
        _, _, responses = self.etcd.txn([], [put, read])
        kvs = responses[1].get("response_range", {}).get("kvs") or []
        return int(kvs[0].get("version", 1)) - 1  # the key's first put: block 0, ids from 1


def _session(value: bytes) -> str | None:
    try:
        found = json.loads(value)
    except ValueError:
        return None
    session = found.get("session") if isinstance(found, dict) else None
    return None if session is None else str(session)


def holder_of(responses: list[dict[str, Any]]) -> str | None:
    """The holder's session in the responses of a transaction whose failure branch read the
    lock (:meth:`EtcdLocks.read`, first); None when there is no lock."""
    for response in responses:
        kvs = response.get("response_range", {}).get("kvs") or []
        if kvs:
            return _session(base64.b64decode(kvs[0].get("value", "")))
    return None
