"""The cluster's pending confirmed commit (RFC 6241 8.4), as etcd holds it.

One key, ``confirmed`` under the cluster's prefix, holds the pending commit's document (JSON:
the backup of running before it as RFC 7951 JSON, persist-id, deadline as wall-clock time,
the holder's node, session and user; controller.netconf.confirmed writes and reads it). It is
bound to no lease, so that a persisted one outlives the replica that took it. A commit without
``persist`` has a second key, ``confirmed-holder``, put in the same transaction on the holder
replica's lock lease (:class:`~controller.cluster.locks.EtcdLocks`): when that replica dies,
its lease expires, the holder key goes, and the leader rolls the commit back (8.4.1: it ends
with its session).

Every change is one transaction guarded on the key's ``mod_revision`` as read (the token):
start only if there is none, extend or forget (claim) only if it is unchanged. The replica
whose claim wins confirms the commit, or rolls it back: exactly once across the cluster.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any

from controller.cluster.etcd import Etcd, Unavailable, encode, equal
from controller.cluster.locks import EtcdLocks
from controller.datastore.replication import unavailable

LOG = logging.getLogger("catsctl.cluster")


class EtcdConfirmed:
    """The cluster's pending confirmed commit (controller.netconf.confirmed.SharedPending)."""

    def __init__(
        self,
        etcd: Etcd,
        locks: EtcdLocks,
        leads: Callable[[], bool],
        prefix: str = "/cats/",
    ) -> None:
        self.etcd = etcd
        self.node = locks.node
        self.key = f"{prefix}confirmed"
        self.holder = f"{prefix}confirmed-holder"
        self._locks = locks
        self._leads = leads

    def leads(self) -> bool:
        """Whether this replica leads the cluster."""
        return self._leads()

    def load(self) -> tuple[str, int, bool] | None:
        """The document, its mod revision, whether its holder is alive; or None."""
        reads = [{"request_range": {"key": encode(k)}} for k in (self.key, self.holder)]
        _, _, responses = self._txn([], reads)
        found, holder = (_kvs(response) for response in responses)
        if not found:
            return None
        value = base64.b64decode(found[0].get("value", "")).decode()
        revision = int(found[0].get("mod_revision", 0))
        return value, revision, bool(holder)  # (a persisted one has none: alive or not)

    def start(self, document: str, *, bound: bool) -> int | None:
        """Put the document if there is none; its revision, or None."""
        return self._put(equal(self.key, "CREATE", 0), document, bound=bound)

    def replace(self, document: str, token: int, *, bound: bool) -> int | None:
        """Put the document if the key is as read; its revision, or None."""
        return self._put(equal(self.key, "MOD", token), document, bound=bound)

    def claim(self, token: int) -> bool:
        """Delete the key (and the holder's) if it is as read."""
        deletes = [{"request_delete_range": {"key": encode(k)}} for k in (self.key, self.holder)]
        won, _, _ = self._txn([equal(self.key, "MOD", token)], deletes)
        return won

    def _put(self, compare: dict[str, Any], document: str, *, bound: bool) -> int | None:
        for attempt in range(2):
            operations: list[dict[str, Any]] = [
                {"request_put": {"key": encode(self.key), "value": encode(document)}}
            ]
            if bound:
                holder = {"key": encode(self.holder), "value": encode(self.node)}
                holder["lease"] = str(self._locks.lease())
                operations.append({"request_put": holder})
            else:
                operations.append({"request_delete_range": {"key": encode(self.holder)}})
            try:
                won, revision, _ = self.etcd.txn([compare], operations)
            except Unavailable as exc:
                if attempt or "lease not found" not in str(exc):
                    raise unavailable(str(exc)) from exc
                self._locks.lease_lost()  # expired unseen (the process was paused): a new one
                continue
            return revision if won else None
        raise AssertionError("unreachable")

    def _txn(
        self, compare: list[dict[str, Any]], success: list[dict[str, Any]]
    ) -> tuple[bool, int, list[dict[str, Any]]]:
        try:
            return self.etcd.txn(compare, success)
        except Unavailable as exc:
            raise unavailable(str(exc)) from exc


def _kvs(response: dict[str, Any]) -> list[dict[str, Any]]:
    kvs = response.get("response_range", {}).get("kvs") or []
    return list(kvs)
