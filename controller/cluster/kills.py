"""``<kill-session>`` of a session of another replica (RFC 6241 7.9), through etcd.

Session ids are unique across the cluster (:class:`~controller.cluster.locks.SessionIds`), so
``lock-denied`` names a session that may live on any replica, and the operator's next step is
to kill it from wherever it is connected. A replica that does not hold the session puts a
request, ``netconf/kill/<session-id>`` under the cluster's prefix (JSON: the killer's session
id), and waits. Every replica follows that prefix as shared records
(:class:`~controller.cluster.records.EtcdRecords`: read, then watched): the one holding the
session kills it as a local ``<kill-session>`` does (its locks released, its connection
closed, an audit record naming the killer) and then deletes the request. The requester
answers ``<ok/>`` once the request is gone; when no replica carried it out within
:data:`KILL_WAIT_S` (no such session anywhere), it withdraws its request, guarded on the
request's revision, and answers ``invalid-value``, as for an unknown session. Without quorum
the request cannot be put: ``resource-denied`` (``cluster-unavailable``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable

from controller.cluster.etcd import Unavailable, encode, equal
from controller.cluster.records import EtcdRecords
from controller.datastore.replication import unavailable

LOG = logging.getLogger("catsctl.cluster")
#: How long a requester waits for the replica holding the session to kill it.
KILL_WAIT_S = 3.0
_POLL_S = 0.05

#: Kill a session of this replica (``session_id``, ``killed_by``); whether it was here.
LocalKill = Callable[[int, int], bool]


class EtcdKills:
    """Kill requests across the cluster, the values of ``records`` (``netconf/kill/``): made
    by :meth:`request`, carried out by the replica that :meth:`follow` s them and holds the
    session."""

    def __init__(self, records: EtcdRecords, wait: float = KILL_WAIT_S) -> None:
        self.records = records
        self.etcd = records.etcd
        self.wait = wait
        self._stop = threading.Event()

    def request(self, session_id: int, killed_by: int) -> bool:
        """Have the replica holding ``session_id`` kill it: True once it did, False when no
        replica holds it (a CatsError ``resource-denied`` when etcd has no quorum)."""
        key = f"{self.records.prefix}{session_id}"
        try:
            revision = self.etcd.put(key, json.dumps({"killed-by": killed_by}).encode())
            deadline = time.monotonic() + self.wait
            while time.monotonic() < deadline and not self._stop.is_set():
                if self.etcd.get(key) is None:
                    LOG.info("cluster: session %d killed on another replica", session_id)
                    return True
                self._stop.wait(_POLL_S)
            withdrawn, _, _ = self.etcd.txn(
                [equal(key, "MOD", revision)], [{"request_delete_range": {"key": encode(key)}}]
            )
            return not withdrawn and self.etcd.get(key) is None  # carried out at the last moment
        except Unavailable as exc:
            raise unavailable(str(exc)) from exc

    def follow(self, kill: LocalKill) -> None:
        """Carry out the requests for this replica's sessions, those made before now too
        (the records' read, then their watch)."""
        self.records.follow(lambda name, value: self._carry_out(name, value, kill))

    def close(self) -> None:
        """Stop waiting (the records stop with the replica's other records)."""
        self._stop.set()

    def _carry_out(self, name: str, value: bytes, kill: LocalKill) -> None:
        """Kill the session of one request if it is this replica's, then delete the request."""
        try:
            killed_by = int(json.loads(value)["killed-by"])
            session_id = int(name)
        except (ValueError, KeyError, TypeError):
            LOG.warning("cluster: malformed kill request %s skipped", name)
            return
        if not kill(session_id, killed_by):
            return
        try:  # not records.delete: this runs in the records' callback, under their lock
            self.etcd.delete(f"{self.records.prefix}{name}")
        except Unavailable as exc:  # no quorum: the requester withdraws it at its deadline
            LOG.warning("cluster: kill request %s carried out, not deleted: %s", name, exc)
