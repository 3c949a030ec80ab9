"""The cluster's startup datastore in etcd (the core's :class:`SharedStartup` seam).

One key, ``startup`` under the cluster's prefix (``/cats/startup``): JSON with ``document``,
the whole of startup as RFC 7951 JSON, and who wrote it (``user``, ``node``, ``time``). Its
etcd ``mod_revision`` is the version a replica has applied. A write (``<copy-config>`` to
startup, ``<delete-config>``, an edit of startup over NETCONF or RESTCONF) is one transaction:
*if* ``mod_revision(startup)`` is the one this replica applied *then* put the new document;
otherwise another replica wrote startup meanwhile and the write is refused (``in-use``). etcd
answers only once a quorum has it. Every replica watches the key and applies each version;
a replica that starts reads it first. Startup changes rarely and is small next to running's
log, so it is kept whole rather than as edits: a version never depends on the one before.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable

from controller.cluster.etcd import Compacted, Etcd, KeyValue, Unavailable, encode, equal, key_value
from controller.cluster.locks import EtcdLocks, holder_of
from controller.datastore.api import DatastoreName
from controller.datastore.errors import DatastoreError, refuse
from controller.datastore.locks import denied
from controller.datastore.replication import Record, unavailable

LOG = logging.getLogger(__name__)
RETRY_S = 0.5  # after a read that failed while following


def record_of(item: KeyValue) -> Record:
    """The startup record etcd holds, with its ``revision`` (the key's ``mod_revision``)."""
    record = json.loads(item.value)
    if not isinstance(record, dict) or not isinstance(record.get("document"), str):
        raise ValueError("the cluster's startup holds no document")
    return {**record, "revision": item.mod_revision}


def encoded(record: Record, node: str) -> str:
    """The value put in etcd: ``record`` without its revision (etcd gives it), with ``node``."""
    kept = {name: value for name, value in record.items() if name != "revision"}
    return json.dumps({**kept, "node": node}, separators=(",", ":"))


class EtcdStartup:
    """The cluster's startup, as one replica reads, writes and follows it."""

    def __init__(
        self, etcd: Etcd, node: str, locks: EtcdLocks | None = None, prefix: str = "/cats/"
    ) -> None:
        self.etcd = etcd
        self.node = node
        self.locks = locks  # the cluster's lock of startup, which every write is guarded on
        self.key = f"{prefix}startup"
        self._revision = 0  # the etcd revision read up to (the watch starts after it)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def put(self, base: int, record: Record, session: str | None = None) -> int:
        """Put ``record`` if the key's ``mod_revision`` is ``base`` (0: it does not exist)
        and no session but ``session`` holds the lock of startup on any replica."""
        same = equal(self.key, "MOD", base)
        value = encoded(record, self.node)
        put = {"request_put": {"key": encode(self.key), "value": encode(value)}}
        guards, reads = [same], [{"request_range": {"key": encode(self.key)}}]
        if self.locks is not None:
            guards.append(self.locks.guard(session))
            reads.append(self.locks.read())
        try:
            succeeded, revision, responses = self.etcd.txn(guards, [put], reads)
        except Unavailable as exc:
            raise unavailable(str(exc)) from exc
        if not succeeded:
            holder = holder_of(responses[1:]) if self.locks is not None else None
            if holder is not None and holder != session:
                raise denied(DatastoreName.STARTUP, holder)
            raise refuse("in-use", changed_meanwhile(responses[:1]))
        return revision

    def read(self) -> Record | None:
        """The key as a quorum has it now, or None."""
        try:
            reply = self.etcd.call("/kv/range", {"key": encode(self.key)})
        except Unavailable as exc:
            raise unavailable(str(exc)) from exc
        self._revision = max(self._revision, int(reply["header"]["revision"]))
        found = reply.get("kvs") or []
        if not found:
            return None
        return record_of(key_value(found[0]))

    def start(self, deliver: Callable[[Record], None]) -> None:
        """Follow the key from the revision :meth:`read` read up to."""
        self._thread = threading.Thread(
            target=self._follow, args=(deliver,), name="cluster-startup", daemon=True
        )
        self._thread.start()

    def _follow(self, deliver: Callable[[Record], None]) -> None:
        """Watch the key; when etcd compacted the revision the watch must go on from (the
        key changed long ago, and its watch broke meanwhile), read it and watch after that."""
        while not self._stop.is_set():
            try:
                for item in self.etcd.watch(self.key, self._revision + 1, self._stop):
                    if item is not None and item.key == self.key:
                        self._revision = max(self._revision, item.mod_revision)
                        _deliver_value(deliver, item)
            except Compacted:
                try:
                    found = self.read()
                except (DatastoreError, ValueError):  # etcd away: try again soon
                    self._stop.wait(RETRY_S)
                    continue
                if found is not None:
                    _deliver(deliver, found)

    def stop(self) -> None:
        """Ask the watch to end (it ends within the watch's read timeout), without waiting."""
        self._stop.set()

    def close(self) -> None:
        """Stop following."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


def _deliver_value(deliver: Callable[[Record], None], item: KeyValue) -> None:
    """Deliver the startup an etcd value holds; a value no replica wrote (not a startup
    record) is logged and skipped, and the watch goes on."""
    try:
        record = record_of(item)
    except ValueError as exc:  # json's errors are ValueErrors too
        LOG.error(
            "the cluster's startup at revision %d is not a startup record (%s): ignored",
            item.mod_revision,
            exc,
        )
        return
    _deliver(deliver, record)


def _deliver(deliver: Callable[[Record], None], record: Record) -> None:
    try:
        deliver(record)
    except Exception:
        LOG.exception("applying the cluster's startup failed")


def changed_meanwhile(responses: list[dict[str, object]]) -> str:
    """The refusal of a write of startup made on a version another replica replaced."""
    who = ""
    for response in responses:
        found = response.get("response_range")
        kvs = found.get("kvs") if isinstance(found, dict) else None
        if isinstance(kvs, list) and kvs:
            record = record_of(key_value(kvs[0]))
            who = f" (by {record.get('user')} on {record.get('node')})"
    return f"startup was written on another replica meanwhile{who}; read it again and retry"
