"""The commits of running as a log in etcd (the core's :class:`Replication` seam).

Keys, under the cluster's prefix (``/cats/`` by default):

* ``config/head``: the number of the last commit; its etcd *version* is that number too, since
  every commit puts it once, and it is the key each commit is guarded on.
* ``config/log/<txid, 20 digits>``: one commit (JSON: txid, time, node, user, edits, changed,
  and the request context every replica's commit history keeps: transport, source, ...).
* ``config/snapshot``: running at commit ``txid`` (JSON: txid, time, node, and ``document``,
  the whole tree as RFC 7951 JSON, as the single-process journal's snapshot prints it).
* ``config/snapshot-txid``: that ``txid`` alone, the small key a new snapshot is guarded on.

A commit is one etcd transaction: *if* ``version(head) == txid - 1`` (the replica has applied
every commit before this one) *then* put the head and the log entry. etcd answers only once a
quorum of members has it in its log, so an acknowledged commit survives the loss of any
minority of etcd members and of the replica that made it. When the comparison fails another
replica committed first (:class:`~controller.datastore.replication.StaleError`). When no
member answers, the write is refused (``resource-denied``, app-tag ``cluster-unavailable``).

Every replica watches ``config/log/`` from the revision it has read up to and applies the
commits in order; the watch is opened again after the last revision seen when it breaks.

The log is bounded: once ``keep`` commits followed the last snapshot, the leader puts a new
one (running at its last commit ``T``) and deletes the commits up to ``T - keep`` in the same
transaction, guarded on the snapshot it replaces (a deposed leader cannot put an older one
back), then asks etcd to compact its history up to the previous snapshot's revision: the
watches of running replicas are past it. A replica whose watch must restart before that
revision (it was stopped, or cut off) gets :class:`~controller.cluster.etcd.Compacted` and
reads what it missed from the log, or from the snapshot when the log no longer has it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from controller.cluster.etcd import Compacted, Etcd, KeyValue, Unavailable, encode, equal
from controller.cluster.locks import EtcdLocks, holder_of
from controller.datastore.api import DatastoreName
from controller.datastore.errors import refuse
from controller.datastore.locks import denied
from controller.datastore.replication import (
    PAST_LOCKS,
    SESSION,
    Record,
    StaleError,
    follows_on,
    unavailable,
)
from controller.types import DataPath

LOG = logging.getLogger(__name__)
DEFAULT_PREFIX = "/cats/"
_DIGITS = 20
PROBE_S = 0.5
SLOW_S = 1.0  # an etcd commit slower than this is logged
#: Commits after a snapshot before the next (``catsctl serve --cluster-log-keep``); the log
#: keeps the last ``keep`` commits before the snapshot too.
DEFAULT_LOG_KEEP = 1000


class ClusterJoinError(OSError):
    """This replica cannot join the cluster (catsctl serve says why and exits)."""


class EtcdReplication:
    """The cluster's commit log in etcd, as one replica sees it."""

    def __init__(
        self, etcd: Etcd, node: str, prefix: str = DEFAULT_PREFIX, keep: int = DEFAULT_LOG_KEEP
    ) -> None:
        self.etcd = etcd
        self.node = node
        self.head = f"{prefix}config/head"
        self.log = f"{prefix}config/log/"
        self.snapshot_key = f"{prefix}config/snapshot"
        self.snapshot_txid = f"{prefix}config/snapshot-txid"
        self.key_check = f"{prefix}secrets-key-check"
        self.keep = keep  # commits between snapshots (0: no snapshot, the log grows)
        #: Whether this replica leads now (set by the membership): only the leader snapshots.
        self.leads: Callable[[], bool] = lambda: False
        self._snapshot_at = 0  # the last snapshot's commit (or offered one), as known here
        self._offers = threading.Lock()
        self._pending: tuple[int, str] | None = None  # the offer the thread takes next
        self._offering: threading.Thread | None = None  # while it runs
        self._revision = 0  # the etcd revision read up to (the watch starts after it)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._probe_thread: threading.Thread | None = None
        self.last_error: str | None = None  # why the last write was refused, for /readyz
        self.consistent_reads = True  # False (--cluster-reads local): reads skip the barrier
        self._head_reads = SharedRead(self._read_head)
        #: The cluster's lock of running (set by the membership): every commit is guarded on it.
        self.locks: EtcdLocks | None = None

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
        absent = equal(self.key_check, "CREATE", 0)
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
        """Put ``record`` as commit ``txid`` if ``txid - 1`` is the last one (quorum-acked) and
        no session but the committing one holds the lock of running (:mod:`.locks`)."""
        session, past_locks = record.get(SESSION), bool(record.get(PAST_LOCKS))
        kept = {k: v for k, v in record.items() if k not in (SESSION, PAST_LOCKS)}
        value = json.dumps({**kept, "node": self.node}, separators=(",", ":"))
        guards, failure = [equal(self.head, "VERSION", txid - 1)], []
        committer = None if session is None else str(session)
        holding = False  # whether the committing session holds the lock here
        if self.locks is not None and not past_locks:
            holding = committer is not None and self.locks.mine() == committer
            guards.append(self.locks.guard(committer))
            failure.append(self.locks.read())
        puts = [
            {"request_put": {"key": encode(self.head), "value": encode(str(txid))}},
            {"request_put": {"key": encode(self._key(txid)), "value": encode(value)}},
        ]
        started = time.monotonic()
        try:
            succeeded, _, responses = self.etcd.txn(guards, puts, failure)
        except Unavailable as exc:
            self.last_error = str(exc)
            raise unavailable(str(exc)) from exc
        self.last_error = None
        took = time.monotonic() - started
        if took > SLOW_S:
            LOG.warning("cluster: etcd took %.1f s to commit transaction %d", took, txid)
        if not succeeded:
            holder = holder_of(responses) if failure else None
            if holder is not None and not (holding and holder == committer):
                raise denied(DatastoreName.RUNNING, holder)
            if holding and holder is None:
                lost = f"session {committer} lost the lock of running (its lease expired)"
                raise refuse("in-use", lost)
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
        return follows_on(txid, records)

    def snapshot(self) -> Record | None:
        """The cluster's snapshot of running (txid, document), or None."""
        try:
            found = self.etcd.get(self.snapshot_key)
        except Unavailable as exc:
            raise unavailable(str(exc)) from exc
        if found is None:
            return None
        record = _record(found)
        if not isinstance(record.get("document"), str):
            raise ValueError("the cluster's snapshot holds no document")
        return record

    def snapshot_due(self, txid: int) -> bool:
        """On the leader, once ``keep`` commits followed the last snapshot it knows of (or
        offered), unless an offer waits already."""
        if self.keep <= 0 or txid < self._snapshot_at + self.keep:
            return False
        with self._offers:
            if self._pending is not None:
                return False
        return self.leads()

    def offer_snapshot(self, txid: int, document: str) -> None:
        """Keep ``document`` as the snapshot at ``txid`` and trim the log, on a thread of its
        own: the commit that made it due does not wait for etcd. An offer made while another
        is in etcd is taken after it (not dropped: once commits stop, the log is still
        trimmed to the bound docs/cluster.md states)."""
        with self._offers:
            self._pending = (txid, document)
            self._snapshot_at = max(self._snapshot_at, txid)  # no offer again before + keep
            if self._offering is not None:
                return  # the thread takes it next
            self._offering = threading.Thread(
                target=self._offer_pending, name="cluster-snapshot", daemon=True
            )
            self._offering.start()

    def _offer_pending(self) -> None:
        while True:
            with self._offers:
                if self._pending is None:
                    self._offering = None
                    return
                (txid, document), self._pending = self._pending, None
            self._keep_snapshot(txid, document)

    def _keep_snapshot(self, txid: int, document: str) -> None:
        try:
            previous = self._trim(txid, document)
        except Unavailable as exc:  # etcd down, or the snapshot larger than a request may be
            LOG.warning(
                "cluster: no snapshot at transaction %d, the log is not trimmed: %s", txid, exc
            )
            return
        if previous:
            try:
                self.etcd.compact(previous)
            except Unavailable as exc:  # compacted already (by a leader before this one)
                LOG.info("cluster: etcd not compacted up to revision %d: %s", previous, exc)

    def _trim(self, txid: int, document: str) -> int:
        """Put the snapshot at ``txid`` and delete the log up to ``txid - keep``, guarded on the
        snapshot it replaces; returns the revision of that one (0: none, or not replaced)."""
        marker = self.etcd.get(self.snapshot_txid)
        before, revision = (int(marker.value), marker.mod_revision) if marker else (0, 0)
        if txid < before + self.keep:
            self._snapshot_at = max(self._snapshot_at, before)
            return 0  # another leader kept one meanwhile
        value = {"txid": txid, "time": datetime.now(UTC).isoformat(), "node": self.node}
        text = json.dumps({**value, "document": document}, separators=(",", ":"))
        unchanged = equal(self.snapshot_txid, "MOD", revision)
        operations = [
            {"request_put": {"key": encode(self.snapshot_key), "value": encode(text)}},
            {"request_put": {"key": encode(self.snapshot_txid), "value": encode(str(txid))}},
            {
                "request_delete_range": {
                    "key": encode(self._key(0)),
                    "range_end": encode(self._key(txid - self.keep + 1)),
                }
            },
        ]
        succeeded, _, _ = self.etcd.txn([unchanged], operations)
        if not succeeded:
            LOG.info("cluster: another replica kept a snapshot before %d", txid)
            return 0
        LOG.info(
            "cluster: snapshot at transaction %d kept (%d bytes), log trimmed up to %d",
            txid,
            len(text),
            txid - self.keep,
        )
        return revision

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
        """Watch the log; when etcd compacted the revision the watch must go on from, read
        what was missed (an empty batch: the core reads the log, or the snapshot, with
        :meth:`since`, which moves the revision read up to) and watch again after it."""
        while not self._stop.is_set():
            try:
                self._watch(deliver)
            except Compacted as exc:
                LOG.info("cluster: %s; reading the missed commits from etcd", exc)
                self._deliver(deliver, [])
                if self._revision < exc.revision:  # not read: etcd down, try again soon
                    self._stop.wait(PROBE_S)

    def _watch(self, deliver: Callable[[list[Record]], None]) -> None:
        for item in self.etcd.watch(self.log, self._revision + 1, self._stop):
            if item is None or not item.key.startswith(self.log):
                continue
            self._deliver(deliver, [_record(item)])

    @staticmethod
    def _deliver(deliver: Callable[[list[Record]], None], records: list[Record]) -> None:
        try:
            deliver(records)
        except Exception:
            LOG.exception("applying a commit of the cluster failed")

    def close(self) -> None:
        """Stop following."""
        self._stop.set()
        with self._offers:
            self._pending, offering = None, self._offering
        for thread in (self._thread, self._probe_thread, offering):
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
