"""The commits of running as a log in etcd (the core's :class:`Replication` seam).

Keys, under the cluster's prefix (``/cats/`` by default):

* ``config/head``: the number of the last commit; its etcd *version* is that number too, since
  every commit puts it once, and it is the key each commit is guarded on.
* ``config/log/<txid, 20 digits>``: one commit (JSON: txid, time, node, user, edits, changed).

A commit is one etcd transaction: *if* ``version(head) == txid - 1`` (the replica has applied
every commit before this one) *then* put the head and the log entry. etcd answers only once a
quorum of members has it in its log, so an acknowledged commit survives the loss of any
minority of etcd members and of the replica that made it. When the comparison fails another
replica committed first (:class:`~controller.datastore.replication.StaleError`). When no
member answers, the write is refused (``resource-denied``, app-tag ``cluster-unavailable``).

Every replica watches ``config/log/`` from the revision it has read up to and applies the
commits in order; the watch is opened again after the last revision seen when it breaks.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable

from controller.cluster.etcd import Etcd, KeyValue, Unavailable, encode
from controller.datastore.replication import Record, StaleError, unavailable
from controller.types import DataPath

LOG = logging.getLogger(__name__)
DEFAULT_PREFIX = "/cats/"
_DIGITS = 20
PROBE_S = 0.5
SLOW_S = 1.0  # an etcd commit slower than this is logged


class ClusterJoinError(OSError):
    """This replica cannot join the cluster (catsctl serve says why and exits)."""


class EtcdReplication:
    """The cluster's commit log in etcd, as one replica sees it."""

    def __init__(self, etcd: Etcd, node: str, prefix: str = DEFAULT_PREFIX) -> None:
        self.etcd = etcd
        self.node = node
        self.head = f"{prefix}config/head"
        self.log = f"{prefix}config/log/"
        self.key_check = f"{prefix}secrets-key-check"
        self._revision = 0  # the etcd revision read up to (the watch starts after it)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._probe_thread: threading.Thread | None = None
        self.last_error: str | None = None  # why the last write was refused, for /readyz
        self.consistent_reads = True  # False (--cluster-reads local): reads skip the barrier
        self._head_reads = SharedRead(self._read_head)

    def _key(self, txid: int) -> str:
        return f"{self.log}{txid:0{_DIGITS}d}"

    def check_key(self, key: bytes) -> None:
        """Join only with the cluster's secrets key (southbound passwords are stored encrypted
        with it in the shared configuration): the first replica records a keyed digest of its
        key, every other one must have the same key.

        Raises:
            ClusterJoinError: this replica's key differs, or etcd cannot be reached.
        """
        mine = hmac.new(key, b"cats-cluster secrets key check", hashlib.sha256).hexdigest()
        absent = {"key": encode(self.key_check), "target": "CREATE", "result": "EQUAL"}
        absent["create_revision"] = "0"
        put = {"request_put": {"key": encode(self.key_check), "value": encode(mine)}}
        try:
            self.etcd.txn([absent], [put])
            recorded = self.etcd.get(self.key_check)
        except Unavailable as exc:
            raise ClusterJoinError(f"cannot join the cluster: {exc}") from exc
        if recorded is None or recorded.value.decode() != mine:
            raise ClusterJoinError(
                "this replica's secrets key (secrets.key in --state-dir) is not the cluster's: "
                "copy the key of a replica of the cluster into the state directory before the "
                "first start (docs/cluster.md)"
            )

    def commit(self, txid: int, record: Record) -> None:
        """Put ``record`` as commit ``txid`` if ``txid - 1`` is the last one (quorum-acked)."""
        value = json.dumps({**record, "node": self.node}, separators=(",", ":"))
        guard = {"key": encode(self.head), "target": "VERSION", "result": "EQUAL"}
        guard["version"] = str(txid - 1)
        puts = [
            {"request_put": {"key": encode(self.head), "value": encode(str(txid))}},
            {"request_put": {"key": encode(self._key(txid)), "value": encode(value)}},
        ]
        started = time.monotonic()
        try:
            succeeded, _, _ = self.etcd.txn([guard], puts)
        except Unavailable as exc:
            self.last_error = str(exc)
            raise unavailable(str(exc)) from exc
        self.last_error = None
        took = time.monotonic() - started
        if took > SLOW_S:
            LOG.warning("cluster: etcd took %.1f s to commit transaction %d", took, txid)
        if not succeeded:
            changed = record.get("changed")
            paths = [DataPath(str(p)) for p in changed] if isinstance(changed, list) else []
            raise StaleError(txid - 1, paths)

    def since(self, txid: int) -> list[Record]:
        """The commits after ``txid``, in order (``unavailable`` when no member answers)."""
        body = {
            "key": encode(self._key(txid + 1)),
            "range_end": encode(self.log[:-1] + chr(ord(self.log[-1]) + 1)),
        }
        try:
            reply = self.etcd.call("/kv/range", body)
        except Unavailable as exc:
            raise unavailable(str(exc)) from exc
        self._revision = max(self._revision, int(reply["header"]["revision"]))
        records = []
        for item in reply.get("kvs") or []:
            records.append(_record(KeyValue("", _b64(item.get("value", "")), 0)))
        return records

    def last(self) -> int | None:
        """The number of the cluster's last commit: one linearizable read of the head (etcd
        answers it only with a quorum, after its leader confirmed it still leads), shared by
        the reads that arrived before it was sent (:class:`SharedRead`); None when no member
        can answer it (or reads are local: ``--cluster-reads local``)."""
        if not self.consistent_reads:
            return None
        return self._head_reads()

    def _read_head(self) -> int | None:
        try:
            head = self.etcd.get(self.head)
        except Unavailable:
            return None
        return 0 if head is None else int(head.value)

    def problem(self) -> str | None:
        """Why etcd cannot take a commit now (the last request or probe failed), or None."""
        return self.last_error

    def start(self, deliver: Callable[[list[Record]], None]) -> None:
        """Follow the log from the revision :meth:`since` read up to, and probe etcd."""
        self._thread = threading.Thread(
            target=self._follow, args=(deliver,), name="cluster-follow", daemon=True
        )
        self._thread.start()
        self._probe_thread = threading.Thread(target=self._probe, name="cluster-probe", daemon=True)
        self._probe_thread.start()

    def _probe(self) -> None:
        """A quorum read of the head every ``PROBE_S``: a member without quorum cannot answer
        it, so writes are refused at once while none can, and taken again once one can."""
        while not self._stop.wait(PROBE_S):
            try:
                self.etcd.get(self.head)
            except Unavailable as exc:
                if self.last_error is None:
                    LOG.warning("cluster: etcd unavailable, configuration writes refused: %s", exc)
                self.last_error = str(exc)
                continue
            if self.last_error is not None:
                LOG.info("cluster: etcd available again, configuration writes resume")
            self.last_error = None

    def _follow(self, deliver: Callable[[list[Record]], None]) -> None:
        for item in self.etcd.watch(self.log, self._revision + 1, self._stop):
            if item is None or not item.key.startswith(self.log):
                continue
            try:
                deliver([_record(item)])
            except Exception:
                LOG.exception("applying a commit of the cluster failed")

    def close(self) -> None:
        """Stop following."""
        self._stop.set()
        for thread in (self._thread, self._probe_thread):
            if thread is not None:
                thread.join(timeout=10)


class SharedRead:
    """Concurrent callers share quorum reads, as etcd batches its own ReadIndex requests.

    A caller needs a read *sent after it called*: that one reflects every commit acknowledged
    before the call. So a caller that finds a read in flight waits for it to end and then for
    the next one, which it starts unless another waiting caller did; every caller waiting then
    takes its answer. Under N concurrent readers a replica sends about one read per round trip
    instead of N.
    """

    def __init__(self, read: Callable[[], int | None]) -> None:
        self._read = read
        self._changed = threading.Condition()
        self._started = 0  # reads sent so far
        self._finished = 0  # the last read answered (its number)
        self._answer: int | None = None
        self._in_flight = False

    def __call__(self) -> int | None:
        with self._changed:
            needed = self._started + 1  # a read sent from now on
            while self._finished < needed:
                if self._in_flight:
                    self._changed.wait()
                    continue
                self._started += 1
                number, self._in_flight = self._started, True
                self._changed.release()
                try:
                    answer = self._read()
                finally:
                    self._changed.acquire()
                    self._in_flight = False
                    self._changed.notify_all()
                self._finished, self._answer = number, answer
            return self._answer


def _b64(text: str) -> bytes:
    import base64  # noqa: PLC0415

    return base64.b64decode(text)


def _record(item: KeyValue) -> Record:
    record = json.loads(item.value)
    if not isinstance(record, dict) or "txid" not in record:
        raise ValueError("a log entry of the cluster is not a commit")
    return record
