"""Transactions of the server core: edits of running, startup and candidate (RFC 6241 7.2,
RFC 8040 4.4-4.6, RFC 8072), all or nothing.

An edit is refused past ``max_edit_nodes`` data nodes before it is parsed. A small edit of
running is applied, validated (entry-local where it can be, :mod:`.local`), persisted and made
current under both locks, and acknowledged once its journal record is durable (group commit:
concurrent commits share one fsync, taken after the locks are released). A large one, past
``shadow_nodes``, is worked on a copy under the write lock alone (:mod:`.shadow` for running,
:meth:`.Candidate.edit_on_copy` for the candidate), so reads go on and see the committed state.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from controller.audit import current as current_request
from controller.audit.events import now_text
from controller.datastore import changes
from controller.datastore.access import Guard
from controller.datastore.api import (
    SYSTEM,
    Change,
    DatastoreName,
    Edit,
    EditOperation,
    Principal,
    Revision,
)
from controller.datastore.datapath import ROOT
from controller.datastore.errors import DatastoreError, refuse
from controller.datastore.history import SNAPSHOT_OPERATION, meta_of, persist_commit
from controller.datastore.parts import CoreParts
from controller.datastore.replication import (
    Record,
    StaleError,
    catch_up,
    consistent,
    retrying,
    unavailable,
)
from controller.datastore.shadow import edit_nodes, shadow_transaction, startup_transaction
from controller.datastore.stores import ConfigStore, edit_from_record
from controller.datastore.transaction import Applier, Txn, locate
from controller.datastore.validation import IndexesNeededError
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import nodes
from controller.model.schema import Encoding
from controller.observability.metrics import COMMIT_LATENCY, COMMITS

LOG = logging.getLogger(__name__)


class Editing(CoreParts):
    """The transactions of the core."""

    def edit(
        self,
        datastore: DatastoreName,
        edits: Sequence[Edit],
        principal: Principal,
        *,
        session: str | None = None,
        test_only: bool = False,
    ) -> Revision:
        """One all-or-nothing transaction (RFC 6241 7.2, RFC 8040 4.4-4.6, RFC 8072).

        An edit of more than ``max_edit_nodes`` data nodes is refused (``too-big``) before it
        is parsed; one of more than ``shadow_nodes`` on running or candidate is worked on a copy
        (:mod:`.shadow`), so that reads go on meanwhile and see the committed state.
        """
        nodes.clean_errors(self.ctx)
        self._locks.check(datastore, session)
        size, bound = edit_nodes(list(edits)), self.settings.max_edit_nodes
        if size > bound:
            raise refuse(
                "too-big",
                f"the edit holds about {size} data nodes, more than the {bound} one edit may "
                "hold (catsctl serve --max-edit-nodes); split it into several edits",
                error_type=ErrorType.PROTOCOL,
            )
        txn = Txn(datastore, principal, session, list(edits), test_only=test_only)
        return self._transact(txn, size)

    def copy_in(
        self,
        datastore: DatastoreName,
        edits: Sequence[Edit],
        principal: Principal,
        *,
        session: str | None = None,
    ) -> Revision:
        """Put what a datastore of the server holds in place (a commit, RFC 6241 8.3.4.1; a
        copy-config from a datastore, 7.3): as :meth:`edit`, but not bounded by
        ``max_edit_nodes``, which bounds what a client sends, not what the server holds."""
        nodes.clean_errors(self.ctx)
        self._locks.check(datastore, session)
        txn = Txn(datastore, principal, session, list(edits))
        return self._transact(txn, edit_nodes(txn.edits))

    def put_back(self, txn: Txn) -> Revision:
        """The server's own transaction (a confirmed commit's rollback, RFC 6241 8.4): past
        the session locks and the size bound; a large one is worked on a copy, as an edit."""
        return self._transact(txn, edit_nodes(txn.edits))

    def _transact(self, txn: Txn, size: int) -> Revision:
        """``txn`` past the checks of its caller; ``size``: its data nodes, about."""
        if any(self.secrets.touches(edit) for edit in txn.edits):  # hashed outside the lock
            with self._contexts.borrow() as ctx:
                txn.edits = self.secrets.prepare(ctx, txn.edits)
        large, test_only = size >= self.settings.shadow_nodes, txn.test_only
        if txn.datastore is DatastoreName.CANDIDATE:
            with self._write:  # the candidate changes as running does: one change at a time
                if large:
                    LOG.info("a large edit of about %d data nodes is worked on a copy", size)
                    candidate = self.candidate
                    return candidate.edit_on_copy(txn.edits, txn.principal, test_only=test_only)
                with self._lock:
                    return self.candidate.edit(
                        txn.edits, txn.principal, txn.session, test_only=test_only
                    )
        running = txn.datastore is DatastoreName.RUNNING
        problem = self.replication.problem() if running and self.replication else None
        if problem is not None:  # no quorum: refused before any lock, reads go on
            raise unavailable(problem)
        if txn.datastore is DatastoreName.STARTUP and not test_only:
            self._startup_current(writing=True)  # edited as the cluster has it
        txn.defer_sync = running
        started = time.perf_counter()
        try:
            with self._write:
                revision = self._on_copy(txn, size) if large else self._small(txn)
            if txn.defer_sync:
                self.running.sync(txn.ticket)  # group commit: shared with concurrent commits
        except CatsError:
            if running:
                COMMITS.labels("refused").inc()
            raise
        if running and not test_only:
            COMMIT_LATENCY.observe(time.perf_counter() - started)
            COMMITS.labels("committed").inc()
        return revision

    def _small(self, txn: Txn) -> Revision:
        with self._lock:
            return self.transaction(txn)

    def _on_copy(self, txn: Txn, size: int) -> Revision:
        """A large transaction of running or startup, on a copy under the write lock alone
        (the caller holds it) while reads go on (:mod:`.shadow`)."""
        if txn.datastore is DatastoreName.STARTUP:
            LOG.info("a large edit of startup of about %d data nodes is worked on a copy", size)
            return startup_transaction(self, txn)
        if txn.datastore is not DatastoreName.RUNNING:
            return self._small(txn)
        LOG.info("a large edit of about %d data nodes is worked on a copy", size)
        self._keep_startup_as_loaded()  # the copy brings its own indexes
        txn.defer_sync = False
        revision: Revision = retrying(self, lambda: shadow_transaction(self, txn))
        with self._lock:  # prints running, which a restricted read hides parts of
            self.running.compact_if_due(self.settings.compact_minimum)
        return revision

    def transaction(self, txn: Txn) -> Revision:
        """Run one transaction past the session locks (the caller holds the core lock); in a
        cluster, again on the newer state when another replica committed first."""
        return retrying(self, lambda: self._indexed(txn))

    def _indexed(self, txn: Txn) -> Revision:
        """One attempt, and once more with the indexes built when it needed them (the first
        transaction after a start that changes what they keep)."""
        try:
            return self._transaction_once(txn)
        except IndexesNeededError:
            self.validator.ready()  # the attempt was undone: on the tree as committed
            return self._transaction_once(txn)

    def _transaction_once(self, txn: Txn) -> Revision:
        store = self.store(txn.datastore)
        guard = Guard(None, "cluster") if txn.replicated else self.guard(txn.principal)
        applier = Applier(self.ctx, store.tree, guard)
        running = store is self.running
        if running:
            self.running_changes()
        try:
            for edit in txn.edits:
                applier.apply(edit)
            if running:
                self.validator.check(store, applier.applied)
            else:
                store.validate()
            change = Change(
                txn.datastore,
                txn.principal,
                changes.diff_document(self.ctx, store.tree, applier.applied),
                tuple(record.path for record in applier.applied),
                store.revisions.prepare(),
            )
            if txn.test_only:
                raise _TestOnlyError
            self._persist(store, txn, change, applier)
        except _TestOnlyError:
            self._undo(applier, running=running)
            return store.revisions.of(None)
        except (StaleError, IndexesNeededError):  # run again on the newer state or indexed
            self._undo(applier, running=running)
            raise
        except CatsError as exc:
            located = locate(exc, applier.applied, store.tree)  # on the tree as edited
            self._undo(applier, running=running)
            raise located from exc
        except Exception as exc:
            self._undo(applier, running=running)
            raise DatastoreError(
                ErrorItem(ErrorType.APPLICATION, "operation-failed", f"commit refused: {exc}")
            ) from exc
        return self._made_current(txn, store, applier, running=running)

    def _run_hooks(self, store: ConfigStore, change: Change) -> None:
        """The commit hooks; one that raises refuses the commit, which the journal forgets."""
        try:
            for hook in self.registrations.commit_hooks:
                hook(change)
        except BaseException:
            store.retract()
            raise

    def _persist(self, store: ConfigStore, txn: Txn, change: Change, applier: Applier) -> None:
        running = store is self.running
        if running and store.replication is not None:
            self._replicate(store, txn, change, applier)
        elif store is self._startup:
            self.persist_startup(store, txn, store)
        else:
            # durable before it is acknowledged: at once, or (defer_sync) once the caller's
            # sync returns, after the locks are released (group commit)
            txn.ticket = store.persist(txn.edits, defer=txn.defer_sync and running)
            if running:
                self._run_hooks(store, change)
        if running and self.history is not None:  # keep how to undo it (a cluster's: every commit)
            undo = applier.undo.records
            self.history.record(
                store.txid, txn, current_request(), applied=applier.applied, undo=undo
            )

    def _replicate(self, store: ConfigStore, txn: Txn, change: Change, applier: Applier) -> None:
        """A commit of running in a cluster: the hooks may refuse it before the cluster has
        it (it cannot be taken back after); one of another replica is already committed."""
        if txn.replicated:
            try:
                for hook in self.registrations.commit_hooks:
                    hook(change)
            except Exception:
                LOG.exception("a commit hook refused transaction %d of the cluster", txn.replicated)
            store.txid = txn.replicated
        else:
            for hook in self.registrations.commit_hooks:
                hook(change)
            persist_commit(store, txn, [record.path for record in applier.applied], self.node)
        self._offer_snapshot(store)

    @staticmethod
    def _offer_snapshot(store: ConfigStore) -> None:
        """On the leader, every so many commits: running as it is at this commit (the tree
        holds it now, under the locks) becomes the cluster's snapshot, so that the log can be
        trimmed (docs/cluster.md). A large commit (worked on a copy) is not offered: a later
        commit is. The commit is the cluster's already: nothing here may undo it."""
        replication = store.replication
        try:
            if replication is not None and replication.snapshot_due(store.txid):
                replication.offer_snapshot(store.txid, store.print())
        except Exception:
            LOG.exception("cluster: no snapshot at transaction %d", store.txid)

    # ------------------------------------------------------------------ cluster

    @property
    def applied(self) -> int:
        """The last transaction of running applied here (in a cluster: the cluster's)."""
        return self.running.txid

    def consistent(self, datastore: DatastoreName) -> None:
        """In a cluster, apply the cluster's commits before a client's read of running (or of
        operational, which holds it): :func:`controller.datastore.replication.consistent`;
        and its startup before a read of startup."""
        if datastore is DatastoreName.STARTUP:
            self._startup_current(writing=False)
        elif self.replication is not None and datastore in (
            DatastoreName.RUNNING,
            DatastoreName.OPERATIONAL,
        ):
            consistent(self)

    def apply_replicated(self, record: Record) -> None:
        """Apply one commit another replica made (the caller holds both locks)."""
        raw = record.get("edits")
        edits = [edit_from_record(item) for item in raw] if isinstance(raw, list) else []
        principal = Principal(str(record.get("user") or SYSTEM.user))
        txid = int(str(record["txid"]))
        txn = Txn(DatastoreName.RUNNING, principal, None, edits, replicated=txid)
        txn.meta = meta_of(record)  # its history entry as the committing replica keeps it
        self._indexed(txn)

    def apply_snapshot(self, record: Record) -> None:
        """Replace running with the cluster's snapshot, as a commit of the cluster made at its
        transaction (validated, notified and given to the commit hooks as any commit; the
        caller holds both locks). The history keeps it as a mark, not a user's commit: the
        commits before it are not this replica's to roll back to (docs/cluster.md)."""
        whole = Edit(EditOperation.REPLACE, ROOT, str(record["document"]), Encoding.JSON)
        txid = int(str(record["txid"]))
        txn = Txn(DatastoreName.RUNNING, SYSTEM, None, [whole], replicated=txid)
        txn.meta = {
            "time": str(record.get("time") or now_text()).replace("+00:00", "Z"),
            "operation": SNAPSHOT_OPERATION,
            "comment": f"the cluster's snapshot at commit {txid}, loaded: this replica has no "
            "history before it",
        }
        self._indexed(txn)

    def follow(self) -> None:
        """Apply what the cluster holds, then every commit of the others as it comes; the
        same for its startup."""
        replication = self.replication
        if replication is not None:
            catch_up(self)
            replication.start(self._deliver)
        shared = self.settings.startup
        if shared is not None:
            self._startup_current(writing=True)  # etcd unreachable: the replica does not start
            shared.start(self.apply_startup)

    # ------------------------------------------------------------------ cluster: startup

    def persist_startup(self, store: ConfigStore, txn: Txn, edited: ConfigStore) -> None:
        """Make a change of startup durable: its own snapshot, or in a cluster the cluster's
        startup, the whole document as ``edited`` holds it (``store`` itself, or the copy a
        large edit was worked on); one the cluster has already (``txn.replicated``, its
        revision) is only noted."""
        shared = self.settings.startup
        if shared is None:
            store.persist(txn.edits)
        elif txn.replicated:
            store.txid = txn.replicated
        else:
            record: Record = {
                "document": edited.print(),
                "user": txn.principal.user,
                "time": now_text(),
            }
            store.txid = shared.put(store.txid, record, txn.session)

    def apply_startup(self, record: Record) -> None:
        """Make the cluster's startup (:meth:`SharedStartup.read`) this replica's unless it
        has that version already: a change of startup the cluster has (validated, notified
        as a ``netconf-config-change`` as any), made by the user who wrote it."""
        revision = int(str(record["revision"]))
        with self._write, self._lock:
            store = self.startup
            if revision <= store.txid:
                return
            whole = Edit(EditOperation.REPLACE, ROOT, str(record["document"]), Encoding.JSON)
            principal = Principal(str(record.get("user") or SYSTEM.user))
            txn = Txn(DatastoreName.STARTUP, principal, None, [whole], replicated=revision)
            self._indexed(txn)

    def _startup_current(self, *, writing: bool) -> None:
        """In a cluster, before a client's read or a write of startup: apply the cluster's
        startup when this replica's watch has not brought it yet (one quorum read). Without
        a quorum a read answers from this replica's copy; a write is refused."""
        shared = self.settings.startup
        if shared is None:
            return
        problem = self.replication.problem() if self.replication is not None else None
        if problem is not None:  # no quorum, as the probe saw: at once, no etcd timeout
            if writing:
                raise unavailable(problem)
            return
        try:
            found = shared.read()
        except DatastoreError:
            if writing:
                raise
            return
        if found is not None:
            self.apply_startup(found)

    def _deliver(self, records: list[Record]) -> None:
        try:
            catch_up(self, records)
        except CatsError:
            LOG.exception("a commit of the cluster could not be applied here")

    def _undo(self, applier: Applier, *, running: bool) -> None:
        applier.undo.rollback()
        if running:
            self.validator.settle(committed=False)

    def _made_current(
        self, txn: Txn, store: ConfigStore, applier: Applier, *, running: bool
    ) -> Revision:
        whole = [path for record in applier.applied for path in record.whole]
        changed = [record.path for record in applier.applied]
        if running:
            self.validator.settle(committed=True)
        applier.undo.commit()
        revision = store.revisions.record(changed, whole)
        if running:
            store.compact_if_due(self.settings.compact_minimum)
            self.authorization.after_commit(store.first[0], changed)
            # in a cluster, audited by every replica (the others' from the cluster's record)
            changes.audit_commit(txn, store.txid, changed)
        if txn.datastore in (DatastoreName.RUNNING, DatastoreName.STARTUP):
            event = changes.config_change(
                txn.datastore, txn.principal, txn.session, applier.applied
            )
            self.bus.publish("NETCONF", event)
        return revision


class _TestOnlyError(Exception):
    """Unwinds a test-only transaction after validation, into its rollback."""


__all__ = ["Editing"]
