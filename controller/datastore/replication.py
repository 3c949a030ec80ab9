"""The seam through which the core commits running to a cluster, and how it follows one.

Without a cluster every commit of running ends in the local journal (:mod:`.journal`). With
one (``catsctl serve --cluster``, :mod:`controller.cluster`), it ends in
:meth:`Replication.commit` instead: the commit becomes the cluster's transaction ``txid``,
guarded by the transaction this replica has applied (``txid - 1``), and it is acknowledged only
once the cluster has it. When another replica committed ``txid`` first, the commit raises
:class:`StaleError`; the core then undoes its transaction, applies what it missed, and runs
the transaction again on the new state when nothing it changed was changed meanwhile (it is
validated anew), or refuses it with ``in-use`` when something was: a commit never overwrites
another it has not seen.

Each replica applies the others' commits in order (:func:`follow`), as they come from the
cluster's watch. A client's read of running is made consistent first (:func:`consistent`, the
technique of Kubernetes' consistent reads from its watch cache): the replica learns the
cluster's last commit with one quorum read and, when it has not applied it yet, applies the
missing commits before it answers, so a session reads its own writes on any replica.

The log is bounded (docs/cluster.md): every so many commits the cluster's leader gives it a
snapshot of running (:meth:`Replication.offer_snapshot`), and the commits the snapshot holds
are dropped from the log. A replica whose last commit is older than the log's first one (it
joined, or was stopped across a trim) finds a gap (:class:`LogGapError`) where it expected
the next commit: it replaces running with the snapshot, then applies the log after it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from controller.datastore.api import CLUSTER_READ_TIMEOUT, CLUSTER_UNAVAILABLE
from controller.datastore.errors import DatastoreError, refuse
from controller.errors import ErrorItem, ErrorType
from controller.observability.metrics import CLUSTER_APPLIED, CLUSTER_READS, CLUSTER_STALE
from controller.types import DataPath

LOG = logging.getLogger(__name__)
#: How often a transaction is run again on a newer state before it is refused with in-use.
ATTEMPTS = 8
#: How long a consistent read waits for this replica's own commit in progress (which holds
#: the write lock for an etcd round trip) before it is refused with ``cluster-read-timeout``.
READ_WAIT_S = 10.0

Record = dict[str, object]  # one commit: txid, time, user, edits, changed
#: Keys of the record :meth:`Replication.commit` is given, not kept in the cluster's log: the
#: session committing (None: none, a RESTCONF write), and whether it is the server's own commit
#: (a confirmed commit's rollback). The commit is refused while another session holds the lock
#: of running anywhere in the cluster, unless it is the server's own.
SESSION = "lock-session"  # not "session": the history's session field is kept in the record
PAST_LOCKS = "past-locks"
T = TypeVar("T")


class StaleError(DatastoreError):
    """Another replica committed first: this replica has not applied ``txid - 1`` yet."""

    def __init__(self, base: int, changed: Sequence[DataPath]) -> None:
        super().__init__(
            ErrorItem(
                ErrorType.APPLICATION,
                "in-use",
                "the configuration was changed on another replica meanwhile",
            )
        )
        self.base = base
        self.changed = tuple(changed)


class LogGapError(Exception):
    """The cluster's log no longer holds the commit after ``base`` (a snapshot replaced it):
    ``first`` is the first commit it holds after ``base`` (0: none)."""

    def __init__(self, base: int, first: int) -> None:
        super().__init__(f"the cluster's log holds no commit {base + 1} (its next is {first})")
        self.base = base
        self.first = first


def follows_on(base: int, records: Sequence[Record]) -> list[Record]:
    """``records``, the commits the log holds after ``base``, when the first is ``base + 1``:
    commits dropped from the log are never skipped silently.

    Raises:
        LogGapError: the first record is not ``base + 1``.
    """
    if records and int(str(records[0]["txid"])) != base + 1:
        raise LogGapError(base, int(str(records[0]["txid"])))
    return list(records)


def unavailable(reason: str) -> DatastoreError:
    """The error of a write the cluster cannot take now (no quorum): nothing was changed."""
    return refuse(
        "resource-denied",
        f"configuration writes are refused: the cluster store is unavailable ({reason}); "
        "reads and select-service go on, writes resume when it is back",
        app_tag=CLUSTER_UNAVAILABLE,
    )


class Replication(Protocol):
    """A replicated log of the commits of running (implemented by :mod:`controller.cluster`)."""

    def commit(self, txid: int, record: Record) -> None:
        """Make ``record`` the cluster's commit ``txid`` if the last one is ``txid - 1`` and no
        session but ``record[SESSION]`` holds the lock of running (unless ``record[PAST_LOCKS]``).

        Raises:
            StaleError: another replica committed ``txid`` first.
            DatastoreError: ``lock-denied``: another session holds the lock of running.
            DatastoreError: the cluster cannot take it (:func:`unavailable`); not committed.
        """
        ...

    def since(self, txid: int) -> list[Record]:
        """The commits after ``txid``, in order (what a replica that is behind applies).

        Raises:
            LogGapError: the log no longer holds commit ``txid + 1`` (see :meth:`snapshot`).
            DatastoreError: the cluster cannot be read (:func:`unavailable`).
        """
        ...

    def snapshot(self) -> Record | None:
        """The cluster's snapshot of running: ``txid`` and ``document`` (the whole tree as
        RFC 7951 JSON), or None when there is none.

        Raises:
            DatastoreError: the cluster cannot be read (:func:`unavailable`).
        """
        ...

    def snapshot_due(self, txid: int) -> bool:
        """Whether this replica should offer a snapshot of running at commit ``txid`` (the
        leader, once enough commits followed the last snapshot); cheap: asked on commits."""
        ...

    def offer_snapshot(self, txid: int, document: str) -> None:
        """Keep ``document`` (running at commit ``txid``) as the cluster's snapshot and drop
        the commits it holds from the log, in the background (a failure is logged: the log
        only grows until the next offer succeeds)."""
        ...

    def last(self) -> int | None:
        """The cluster's last commit as a quorum of its store has it now (one linearizable
        read), or None when no quorum answers."""
        ...

    def problem(self) -> str | None:
        """Why the cluster cannot take a commit now (no quorum), or None: a write is refused
        at once (:func:`unavailable`) instead of waiting for the store's timeout."""
        ...

    def start(self, deliver: Callable[[list[Record]], None]) -> None:
        """Call ``deliver`` with each batch of new commits, in order, from now on; with an
        empty batch when commits may have been missed (the store forgot the history the
        follower needed): the core then reads them itself (:func:`catch_up`)."""
        ...

    def close(self) -> None:
        """Stop following the cluster."""
        ...


class SharedStartup(Protocol):
    """A cluster's startup datastore (``catsctl serve --cluster``, docs/cluster.md): one
    document, the whole of startup as RFC 7951 JSON, that every replica applies. Its
    ``revision`` numbers its versions (0: the cluster has none yet: startup is empty)."""

    def put(self, base: int, record: Record, session: str | None = None) -> int:
        """Make ``record`` (``document``, ``user``, ``time``) the cluster's startup if
        ``base`` is still its revision (the one this replica applied) and no session but
        ``session`` holds the lock of startup on any replica; returns the new revision.

        Raises:
            DatastoreError: ``in-use``: another replica wrote startup meanwhile;
                ``lock-denied``: another session holds the lock of startup; or the cluster
                cannot take it (:func:`unavailable`). Not written.
        """
        ...

    def read(self) -> Record | None:
        """The cluster's startup now (one quorum read): its ``revision``, ``document``,
        ``user`` and ``node``, or None when it has none.

        Raises:
            DatastoreError: the cluster cannot be read (:func:`unavailable`).
        """
        ...

    def start(self, deliver: Callable[[Record], None]) -> None:
        """Call ``deliver`` with each new version of the cluster's startup (as :meth:`read`
        gives it), in order, from the one :meth:`read` last gave on."""
        ...

    def close(self) -> None:
        """Stop following the cluster's startup."""
        ...


def overlaps(mine: Sequence[str], theirs: Sequence[str]) -> bool:
    """Whether two commits changed a node in common (one path at or under the other)."""
    return any(_within(a, b) or _within(b, a) for a in mine for b in theirs)


def _within(path: str, prefix: str) -> bool:
    if prefix in ("/", ""):  # the whole datastore (a replace of the root)
        return True
    if not path.startswith(prefix):
        return False
    return len(path) == len(prefix) or path[len(prefix)] in "/["


def conflict(stale: StaleError, newer: Sequence[Record]) -> DatastoreError | None:
    """The ``in-use`` error when a commit the stale one did not see changed what it changed."""
    for record in newer:
        theirs = record.get("changed")
        if not isinstance(theirs, list) or overlaps(stale.changed, [str(p) for p in theirs]):
            return refuse(
                "in-use",
                f"the configuration this commit changes was changed on another replica "
                f"meanwhile (transaction {record.get('txid')} by {record.get('user')}); "
                "read it again and retry",
            )
    return None


class Follower(Protocol):
    """What following a cluster needs of the core."""

    @property
    def replication(self) -> Replication | None:
        """The cluster's log (None: no cluster)."""
        ...

    @property
    def applied(self) -> int:
        """The last transaction of the cluster applied to running here."""
        ...

    @property
    def write_lock(self) -> threading.RLock:
        """Taken first by every change of running."""
        ...

    @property
    def read_lock(self) -> threading.RLock:
        """The core's lock."""
        ...

    def apply_replicated(self, record: Record) -> None:
        """Apply one commit of another replica (the caller holds both locks)."""
        ...

    def apply_snapshot(self, record: Record) -> None:
        """Replace running with the cluster's snapshot (:meth:`Replication.snapshot`) as the
        commit ``record["txid"]`` (the caller holds both locks)."""
        ...


def catch_up(host: Follower, records: Sequence[Record] | None = None) -> list[Record]:
    """Apply the cluster's commits this replica has not applied, in order; returns them.

    ``records`` are the ones a watch delivered: when they do not follow on from what is
    applied (a gap: a watch that broke), or there are none (the watch lost its history), the
    missing ones are read from the cluster instead: from its snapshot first when the log no
    longer holds them.
    """
    replication = host.replication
    if replication is None:
        return []
    with host.write_lock, host.read_lock:
        base = host.applied
        if not records or not _follows(records, base):
            records = _read_since(host, replication)
        done = []
        for record in records:
            if int(str(record["txid"])) == host.applied + 1:
                host.apply_replicated(record)
                CLUSTER_APPLIED.inc()
                done.append(record)
        return done


def _read_since(host: Follower, replication: Replication) -> list[Record]:
    """The commits after the applied one; when the log no longer holds the next one, running
    is replaced with the cluster's snapshot first (the caller holds both locks). A trim
    between the two reads means another round, a few at most."""
    for _ in range(ATTEMPTS):
        try:
            return replication.since(host.applied)
        except LogGapError as gap:
            found = replication.snapshot()
            if found is None or int(str(found["txid"])) < gap.first - 1:
                raise refuse(
                    "operation-failed",
                    f"{gap}, and the cluster has no snapshot that covers it",
                ) from gap
            LOG.info("cluster: %s; loading the snapshot at commit %s", gap, found["txid"])
            host.apply_snapshot(found)
    raise refuse("operation-failed", "the cluster's log was trimmed faster than it was read")


def _follows(records: Sequence[Record], base: int) -> bool:
    numbers = [int(str(record["txid"])) for record in records]
    newer = [number for number in numbers if number > base]
    return newer == list(range(base + 1, base + 1 + len(newer)))


def retrying(host: Follower, attempt: Callable[[], T]) -> T:
    """Run ``attempt`` (one transaction of running) until the cluster takes it.

    A stale attempt (another replica committed first) was undone; what was missed is applied
    and the attempt runs again on the new state, unless the missed commits changed what it
    changed (``in-use``). The caller holds the write lock, so no other change comes between.
    """
    for _ in range(ATTEMPTS):
        try:
            return attempt()
        except StaleError as stale:
            newer = catch_up(host)
            error = conflict(stale, newer)
            if error is not None:
                CLUSTER_STALE.labels("in-use").inc()
                raise error from None
            CLUSTER_STALE.labels("revalidated").inc()
            LOG.debug("commit ran again after %d commit(s) of other replicas", len(newer))
    raise refuse(
        "in-use",
        f"the configuration changed on other replicas {ATTEMPTS} times while this commit "
        "was validated; retry",
    )


def consistent(host: Follower, wait_s: float = READ_WAIT_S) -> None:
    """Before a client's read of running: apply every commit the cluster has now.

    One quorum read gives the cluster's last commit; when this replica has not applied it yet
    (its watch is a little behind), it reads and applies the missing ones itself. Without a
    quorum (the probe saw it lost, or this read fails) the read is answered from this
    replica's copy, as docs/cluster.md says: reads go on while writes are refused.

    Raises:
        DatastoreError: ``resource-denied``, app-tag ``cluster-read-timeout``, when this
            replica could not apply the missing commits within ``wait_s``.
    """
    replication = host.replication
    if replication is None:
        return
    target = None if replication.problem() is not None else replication.last()
    if target is None:
        CLUSTER_READS.labels("local").inc()
        return
    if host.applied >= target:
        CLUSTER_READS.labels("current").inc()
        return
    if host.write_lock.acquire(timeout=wait_s):
        try:
            catch_up(host)
        except DatastoreError:
            CLUSTER_READS.labels("local").inc()  # the store went away meanwhile
            return
        finally:
            host.write_lock.release()
    if host.applied < target:
        raise refuse(
            "resource-denied",
            f"this replica has applied the cluster's commits up to {host.applied}, not yet "
            f"{target}, and could not catch up within {wait_s:g} s; retry, or read on "
            "another replica",
            app_tag=CLUSTER_READ_TIMEOUT,
        )
    CLUSTER_READS.labels("caught-up").inc()
