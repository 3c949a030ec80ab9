"""Values the replicas share, one etcd key each under a prefix (controller.datastore.shared).

``put`` is one transaction: *if* the key's ``mod_revision`` is the one this replica last saw
(0: it saw none) *then* put the value, *else* read the key. So a replica that missed another's
change never overwrites it: its own is dropped and the newer value adopted (the ``changed``
callable is given it), as a stale commit of running is undone. A delete is a transaction too,
and its revision is remembered, so a put older than the delete that the watch brings late is
not adopted again.

Every replica reads the prefix once (``follow``), then watches it from the revision of that
read; an event older than what this replica saw of the key (its own put, or one it read on a
refused put) changes nothing. A watch that etcd can no longer resume (compacted) is replaced
by a new read of the prefix.
"""

from __future__ import annotations

import base64
import logging
import threading
from typing import Any

from controller.cluster.etcd import (
    Compacted,
    Etcd,
    KeyValue,
    Unavailable,
    encode,
    equal,
    key_value,
    prefix_end,
)
from controller.datastore.replication import unavailable
from controller.datastore.shared import Changed

LOG = logging.getLogger("catsctl.cluster")


def _ignore(name: str, value: bytes) -> None:
    del name, value


class EtcdRecords:
    """The values under ``prefix`` (``/cats/agent-sessions/``, say), as etcd holds them."""

    def __init__(self, etcd: Etcd, prefix: str) -> None:
        self.etcd = etcd
        self.prefix = prefix
        self._seen: dict[str, int] = {}  # name -> the revision of the key this replica knows
        self._lock = threading.Lock()  # one change or event at a time, in revision order
        self._stop = threading.Event()
        self._changed: Changed = _ignore
        self._thread: threading.Thread | None = None

    def put(self, name: str, value: bytes) -> bool:
        """Put ``value`` if ``name`` is as this replica last saw it, else adopt the newer one."""
        key = encode(self.prefix + name)
        with self._lock:
            compare = equal(self.prefix + name, "MOD", self._seen.get(name, 0))
            won, revision, responses = self._txn(
                [compare],
                [{"request_put": {"key": key, "value": encode(value)}}],
                [{"request_range": {"key": key}}],
            )
            if won:
                self._seen[name] = revision
                return True
            kvs = responses[0].get("response_range", {}).get("kvs") if responses else None
            if not kvs:  # deleted by another replica: not written again
                self._seen[name] = revision
                return False
            self._seen[name] = int(kvs[0].get("mod_revision", 0))
            LOG.warning(
                "cluster: %s%s changed on another replica first; its value is kept",
                self.prefix,
                name,
            )
            self._changed(name, base64.b64decode(kvs[0].get("value", "")))
            return False

    def delete(self, name: str) -> None:
        """Delete the key; remember the delete's revision."""
        key = encode(self.prefix + name)
        with self._lock:
            _, revision, _ = self._txn([], [{"request_delete_range": {"key": key}}], [])
            self._seen[name] = revision

    def follow(self, changed: Changed) -> None:
        """Read every value now (``changed`` is given each), then watch on a thread."""
        self._changed = changed
        revision = self._load()
        self._thread = threading.Thread(
            target=self._run, args=(revision,), name="cluster-records", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop watching."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    # ------------------------------------------------------------------ following

    def _load(self) -> int:
        """Read the prefix; adopt what is newer than what was seen; etcd's revision."""
        body = {"key": encode(self.prefix), "range_end": encode(prefix_end(self.prefix))}
        reply = self.etcd.call("/kv/range", body)
        for item in reply.get("kvs") or []:
            self._adopt(key_value(item))
        return int(reply["header"]["revision"])

    def _run(self, revision: int) -> None:
        while not self._stop.is_set():
            try:
                for item in self.etcd.watch(self.prefix, revision + 1, self._stop):
                    if item is not None:
                        revision = max(revision, item.mod_revision)
                        self._adopt(item)
            except Compacted:  # the watch reopens a broken stream itself: only this ends it
                LOG.warning("cluster: the watch of %s was compacted; reading it", self.prefix)
            if self._stop.is_set():
                return
            try:
                revision = self._load()
            except Unavailable as exc:
                LOG.warning("cluster: %s not read: %s", self.prefix, exc)
                self._stop.wait(1.0)

    def _adopt(self, item: KeyValue) -> None:
        name = item.key.removeprefix(self.prefix)
        with self._lock:
            if item.mod_revision <= self._seen.get(name, 0):
                return  # this replica's own put, or one it has already adopted
            self._seen[name] = item.mod_revision
            try:
                self._changed(name, item.value)
            except Exception:  # one value that cannot be taken must not end the watch
                LOG.exception("cluster: %s%s not taken", self.prefix, name)

    def _txn(
        self,
        compare: list[dict[str, Any]],
        success: list[dict[str, Any]],
        failure: list[dict[str, Any]],
    ) -> tuple[bool, int, list[dict[str, Any]]]:
        try:
            return self.etcd.txn(compare, success, failure)
        except Unavailable as exc:
            raise unavailable(str(exc)) from exc
