"""``<kill-session>`` of a session of another replica (RFC 6241 7.9), through etcd.

Session ids are unique across the cluster (:class:`~controller.cluster.locks.SessionIds`), so
``lock-denied`` names a session that may live on any replica, and the operator's next step is
to kill it from wherever it is connected. A replica that does not hold the session puts a
request, ``netconf/kill/<session-id>`` under the cluster's prefix (JSON: the killer's session
id), and waits. Every replica follows that prefix: the one holding the session kills it as a
local ``<kill-session>`` does (its locks released, its connection closed, an audit record
naming the killer) and then deletes the request, guarded on the request's revision. The
requester answers ``<ok/>`` once the request is gone; when no replica carried it out within
:data:`KILL_WAIT_S` (no such session anywhere), it withdraws its request, guarded likewise,
and answers ``invalid-value``, as for an unknown session. Without quorum the request cannot be
put: ``resource-denied`` (``cluster-unavailable``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable

from controller.cluster.etcd import (
    Compacted,
    Etcd,
    KeyValue,
    Unavailable,
    encode,
    key_value,
    prefix_end,
)
from controller.datastore.replication import unavailable

LOG = logging.getLogger("catsctl.cluster")
#: How long a requester waits for the replica holding the session to kill it.
KILL_WAIT_S = 3.0
_POLL_S = 0.05

#: Kill a session of this replica (``session_id``, ``killed_by``); whether it was here.
LocalKill = Callable[[int, int], bool]


def _same_request(key: str, revision: int) -> dict[str, str]:
    return {"key": encode(key), "target": "MOD", "result": "EQUAL", "mod_revision": str(revision)}


class EtcdKills:
    """Kill requests across the cluster: made by :meth:`request`, carried out by the replica
    that :meth:`follow` s them and holds the session."""

    def __init__(self, etcd: Etcd, prefix: str = "/cats/", wait: float = KILL_WAIT_S) -> None:
        self.etcd = etcd
        self.prefix = f"{prefix}netconf/kill/"
        self.wait = wait
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def request(self, session_id: int, killed_by: int) -> bool:
        """Have the replica holding ``session_id`` kill it: True once it did, False when no
        replica holds it (a CatsError ``resource-denied`` when etcd has no quorum)."""
        key = f"{self.prefix}{session_id}"
        try:
            revision = self.etcd.put(key, json.dumps({"killed-by": killed_by}).encode())
            deadline = time.monotonic() + self.wait
            while time.monotonic() < deadline and not self._stop.is_set():
                if self.etcd.get(key) is None:
                    LOG.info("cluster: session %d killed on another replica", session_id)
                    return True
                self._stop.wait(_POLL_S)
            withdrawn, _, _ = self.etcd.txn(
                [_same_request(key, revision)], [{"request_delete_range": {"key": encode(key)}}]
            )
        except Unavailable as exc:
            raise unavailable(str(exc)) from exc
        return not withdrawn and self.etcd.get(key) is None  # carried out at the last moment

    def follow(self, kill: LocalKill) -> None:
        """Carry out the requests for this replica's sessions from now on (a thread)."""
        self._thread = threading.Thread(
            target=self._follow, args=(kill,), name="cluster-kills", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop following."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _follow(self, kill: LocalKill) -> None:
        while not self._stop.is_set():
            try:
                reply = self.etcd.call(
                    "/kv/range",
                    {"key": encode(self.prefix), "range_end": encode(prefix_end(self.prefix))},
                )
            except Unavailable as exc:
                LOG.debug("cluster: kill requests not read: %s", exc)
                self._stop.wait(1.0)
                continue
            for item in reply.get("kvs") or []:  # made before this replica followed them
                self._carry_out(key_value(item), kill)
            start = int(reply["header"]["revision"]) + 1
            try:
                for found in self.etcd.watch(self.prefix, start, self._stop):
                    if found is not None:
                        self._carry_out(found, kill)
            except Compacted:  # history trimmed past where the watch went on: read anew
                LOG.info("cluster: kill requests read anew (etcd compacted its history)")
            except Exception:  # a bad answer: read the requests anew
                LOG.exception("cluster: following kill requests broke; reading them anew")
                self._stop.wait(1.0)

    def _carry_out(self, found: KeyValue, kill: LocalKill) -> None:
        """Kill the session of one request if it is this replica's, then delete the request."""
        name = found.key.removeprefix(self.prefix)
        try:
            killed_by = int(json.loads(found.value)["killed-by"])
            session_id = int(name)
        except (ValueError, KeyError, TypeError):
            LOG.warning("cluster: malformed kill request %s skipped", found.key)
            return
        if not kill(session_id, killed_by):
            return
        try:
            self.etcd.txn(
                [_same_request(found.key, found.mod_revision)],
                [{"request_delete_range": {"key": encode(found.key)}}],
            )
        except Unavailable as exc:  # the requester withdraws it at its deadline
            LOG.warning("cluster: kill request %s carried out, not deleted: %s", found.key, exc)
