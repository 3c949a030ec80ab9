"""The server core (api.ServerCore): NMDA datastores, transactions, locks, RPCs, notifications.

One re-entrant lock serialises every use of the libyang trees: a read never sees a half-applied
edit and edits are applied one transaction at a time. State providers run before the lock is
taken; commit hooks run under it (they may read the core). Lock order is core, then bus.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from controller.audit import Event, HistoryStore
from controller.audit import current as current_request
from controller.audit import record as audit
from controller.datastore import changes, operational, reads, review, rpc, snapshot
from controller.datastore.access import Guard
from controller.datastore.api import (
    SYSTEM,
    Change,
    Content,
    DatastoreName,
    Edit,
    Notification,
    Principal,
    ReadRequest,
    ReadResult,
    Registrations,
    Revision,
    StateProvider,
    StreamInfo,
    Subscription,
    WithDefaults,
)
from controller.datastore.authorization import AccountsWatcher, Authorization
from controller.datastore.bus import (
    DEFAULT_PER_USER,
    DEFAULT_REPLAY,
    NotificationBus,
    Subscriber,
)
from controller.datastore.candidate import Candidate
from controller.datastore.compare import ChangeItem
from controller.datastore.contexts import Contexts, default_size
from controller.datastore.errors import DatastoreError, operation_failed, refuse
from controller.datastore.files import REAL_DISK, Disk
from controller.datastore.hiding import Hider, Selection
from controller.datastore.history import HistoryRecorder
from controller.datastore.kept import KeptDocuments
from controller.datastore.locks import Locks
from controller.datastore.nacm import NACM_PATH
from controller.datastore.operations import DatastoreOperations
from controller.datastore.replication import (
    Record,
    Replication,
    StaleError,
    catch_up,
    retrying,
    unavailable,
)
from controller.datastore.secrets import BUILT_IN, SecretKind, Secrets, load_key
from controller.datastore.shadow import SHADOW_NODES, edit_nodes, shadow_transaction
from controller.datastore.stores import COMPACT_MINIMUM, ConfigStore, edit_from_record
from controller.datastore.transaction import Applier, Txn, locate
from controller.datastore.validation import FullValidation, ValidationStats, Validator
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import native, nodes
from controller.model.library import module_records, modules_state, yang_library
from controller.model.schema import Encoding, Schema
from controller.observability.metrics import COMMIT_LATENCY, COMMITS
from controller.types import DataPath

LOG = logging.getLogger(__name__)
YANG_LIBRARY = DataPath("/ietf-yang-library:yang-library")
MAX_EDIT_NODES = 2_000_000  # about 300k list entries of a few leaves each
MODULES_STATE = DataPath("/ietf-yang-library:modules-state")  # RFC 7895, legacy in RFC 8525
DATASTORES = tuple(name.identity for name in DatastoreName)


@dataclass(frozen=True, slots=True)
class CoreSettings:
    """Tunables of the core."""

    replay_size: int = DEFAULT_REPLAY
    compact_minimum: int = COMPACT_MINIMUM
    incremental: bool = True  # entry-local validation with indexes (else always full)
    streams: tuple[str, ...] = ()
    parse_contexts: int | None = None  # twin contexts for parallel RPC parsing; None: one per CPU
    hash_password: Callable[[str], str] | None = None  # for $0$ passwords; None: SHA-512 crypt
    history: HistoryStore | None = None  # where every commit of running is kept (None: nowhere)
    disk: Disk = REAL_DISK  # where persisted bytes are written (a test's full disk)
    subscriptions_per_user: int = DEFAULT_PER_USER  # event streams, NETCONF subscriptions
    max_edit_nodes: int = MAX_EDIT_NODES  # data nodes of one edit; more: too-big
    shadow_nodes: int = SHADOW_NODES  # from this size an edit of running works on a copy
    compact_at_close: bool = True  # False: close leaves the journal as a crash would (tests)
    replication: Replication | None = None  # a cluster's log instead of running's journal


class Core:
    """The model-driven server core both northbounds share."""

    def __init__(
        self,
        schema: Schema,
        state_dir: Path | None,
        registrations: Registrations | None = None,
        settings: CoreSettings | None = None,
    ) -> None:
        self.schema = schema
        self.ctx = schema.context.cdata
        self.settings = settings or CoreSettings()
        self.registrations = registrations or Registrations()
        secret_leaves = sorted(self.registrations.secrets)
        denied = [*secret_leaves, *sorted(self.registrations.protected)]
        self.authorization = Authorization(self.ctx, denied)
        leaves = {**BUILT_IN, **dict.fromkeys(secret_leaves, SecretKind.ENCRYPT)}
        self.secrets = Secrets(load_key(state_dir), leaves, self.settings.hash_password)
        self._lock = threading.RLock()
        self._write = threading.RLock()  # changes of running, one at a time; before _lock
        self._locks = Locks()
        self._operations: dict[DataPath, rpc.Operation] = {}  # RPCs, resolved once
        self._notifications: dict[int, bool] = {}  # notification schema node: reads running
        self._free_notifications: dict[str, bool] = {}  # top-level by name: reads no running
        self.bus = NotificationBus(
            self._matches,
            self.settings.replay_size,
            self.settings.streams,
            self.settings.subscriptions_per_user,
        )
        records = module_records(schema)
        library = yang_library(records, DATASTORES)
        legacy = modules_state(records)
        self._state: dict[DataPath, StateProvider] = {
            YANG_LIBRARY: lambda: library,
            MODULES_STATE: lambda: legacy,
        }
        self._state[DataPath(NACM_PATH)] = self.authorization.state
        self._state.update(self.registrations.state)
        folder, disk = state_dir, self.settings.disk
        schema_id = snapshot.fingerprint(records, native.library_file())
        replicated = self.settings.replication
        self.running = ConfigStore(
            self.ctx, DatastoreName.RUNNING, None if replicated else folder, disk, schema_id
        )
        self.running.replication = replicated
        self._startup = ConfigStore(self.ctx, DatastoreName.STARTUP, folder, disk, schema_id)
        self._startup_copied = True  # False: startup is running as loaded, not copied yet
        self._startup_lyb: bytes | None = None  # running as loaded, once running changed
        self._kept = KeptDocuments(folder, disk)
        self.candidate = Candidate(self)
        self._datastores = DatastoreOperations(
            self, self.candidate, (self._write, self._lock), self._locks
        )
        self.validator: Validator = self._validator()
        size = self.settings.parse_contexts
        self._contexts = Contexts(schema, default_size() if size is None else size)
        store = self.settings.history
        self.history = HistoryRecorder(store) if store is not None else None
        with self._lock:
            self.running.load()
            # no startup of its own: a copy of running as loaded, taken when first needed
            self._startup_copied = self._startup.load()
            self.validator.rebuild(self.running)
            self.authorization.reload(self.running.first[0])
        self.authorization.watch_accounts(self._end_streams_of_deleted)

    @property
    def startup(self) -> ConfigStore:
        """The startup datastore; without one of its own, running as loaded: a copy of
        running's tree while running is unchanged, else parsed from the LYB document
        :meth:`running_changes` printed of it (a tenth of a tree's memory until read)."""
        if not self._startup_copied:
            with self._lock:
                if not self._startup_copied:
                    lyb, self._startup_lyb = self._startup_lyb, None
                    if lyb is not None:
                        self._startup.replace_tree(nodes.parse_lyb(self.ctx, lyb))
                    else:
                        self._startup.replace_tree(self.running.copy_tree())
                    self._startup_copied = True
        return self._startup

    def running_changes(self) -> None:
        """Called before a transaction changes running's tree in place (the caller holds the
        write lock): what start-up left to derive from running as loaded is derived now."""
        self._keep_startup_as_loaded()
        self.validator.ready()  # indexes left from the start-up, on the tree as committed

    def _keep_startup_as_loaded(self) -> None:
        """Before running first changes: print it for a startup that is running as loaded."""
        with self._lock:
            if not self._startup_copied and self._startup_lyb is None:
                if self.running.first[0]:
                    self._startup_lyb = nodes.print_lyb(self.running.first[0])
                else:
                    self._startup_copied = True  # empty, as startup is

    def _validator(self) -> Validator:
        if self.settings.incremental:
            from controller.datastore.local import LocalValidation  # noqa: PLC0415

            return LocalValidation(self.ctx)
        return FullValidation()

    def end_subscriptions(self) -> None:
        """End every event-stream subscription, so that no client holds a worker at shutdown."""
        self.bus.close_all()

    def close(self) -> None:
        """End the subscriptions, free the trees and close the files (the schema belongs to
        the caller)."""
        self.end_subscriptions()
        with self._write, self._lock:
            if self.settings.compact_at_close:  # the next start loads one snapshot
                self.running.compact_at_close()
                self._startup.compact_at_close()
            self.candidate.close()
            self.running.close()
            self._startup.close()
            self._contexts.close()
        self.secrets.close()

    def __enter__(self) -> Core:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ access

    @property
    def per_node(self) -> bool:
        """Whether NACM is enforced now (``enable-nacm``): per-node checks cost nothing when
        it is not."""
        return self.authorization.nacm.policy.enable_nacm

    def guard(self, principal: Principal) -> Guard:
        """The access guard of a transaction run by ``principal`` (RFC 8341 3.4.5)."""
        return self.authorization.guard(principal)

    def authorize(self, principal: Principal, module: str, name: str) -> None:
        """RFC 8341 3.4.4 for a protocol operation a northbound serves itself: ``access-denied``
        unless ``principal`` may invoke ``module:name``."""
        self.authorization.named_operation(principal, module, name)

    def watch_accounts(self, watcher: AccountsWatcher) -> None:
        """Call ``watcher`` with the remaining user names after every change of the users or
        of NACM (a northbound ends the sessions of users who are gone)."""
        self.authorization.watch_accounts(watcher)

    def _end_streams_of_deleted(self, users: frozenset[str]) -> None:
        ended = self.bus.close_owned(lambda owner: owner in users or owner == SYSTEM.user)
        if ended:
            LOG.info("nacm: ended %d event stream(s) of deleted users", ended)

    def reveal(self, secret: str) -> str:
        """The clear text of a stored secret (southbound credentials), for the server's own
        use; never for a reply."""
        return self.secrets.reveal(secret)

    def keep(self, name: str, document: str | None) -> None:
        """Durably keep (None: forget) a small document of the server's own; see
        :class:`~controller.datastore.kept.KeptDocuments`."""
        self._kept.keep(name, document)

    def kept(self, name: str) -> str | None:
        """A document :meth:`keep` kept, also before a restart; None when there is none."""
        return self._kept.kept(name)

    def validation_stats(self) -> ValidationStats:
        """How many running transactions were validated locally and in full."""
        return self.validator.stats()

    # ------------------------------------------------------------------ reads

    def store(self, datastore: DatastoreName) -> ConfigStore:
        """The configuration store of a datastore (candidate: its tree or running's)."""
        if datastore is DatastoreName.STARTUP:
            return self.startup
        if datastore is DatastoreName.CANDIDATE and self.candidate.store is not None:
            return self.candidate.store
        if datastore is DatastoreName.OPERATIONAL:
            raise refuse("operation-not-supported", "operational is not a configuration datastore")
        return self.running

    def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
        """Read a subtree of a datastore (RFC 8040 4.3, RFC 8527 3.2). What the principal may
        not read is left out silently (RFC 8341 3.4.5): a target it may not read reads as
        absent."""
        nodes.clean_errors(self.ctx)
        if request.datastore is DatastoreName.OPERATIONAL:
            return self._read_operational(request, principal)
        with self._lock:
            store = self.store(request.datastore)
            revision = store.revisions.of(request.path)
            if request.content is Content.NONCONFIG:
                return ReadResult(None if request.path else reads.empty(request.encoding), revision)
            user = self.authorization.user(principal)
            with Hider(store.tree) as hider:
                if user is not None and not self.authorization.hide(
                    user, store.tree, request.path, hider
                ):
                    return ReadResult(None, revision)  # the target may not be read: absent
                if request.selection is not None:
                    defaults = request.with_defaults is WithDefaults.REPORT_ALL
                    Selection(self.ctx, request.selection, defaults=defaults).apply(
                        store.tree, hider
                    )
                    request = replace(request, selection=None, path=None)
                document = reads.render(self.ctx, store.first[0], request)
            return ReadResult(document, revision)

    def _read_operational(self, request: ReadRequest, principal: Principal) -> ReadResult:
        if request.selection is not None:  # the same nodes, selected on a copy
            union = " | ".join(request.selection)
            request = replace(request, selection=None, xpath_filter=union)
        regions = operational.provider_paths(self._state, request)
        states = {region: self._state[region]() for region in regions}  # outside the lock
        with self._lock:
            tree = operational.build(self.ctx, self.running.first[0], request, states)
            try:
                if request.with_origin:
                    origins = {r: operational.LEARNED for r in states}
                    for region in (YANG_LIBRARY, MODULES_STATE):
                        if region in origins:
                            origins[region] = operational.SYSTEM
                    operational.annotate_origin(self.ctx, tree, request, origins)
                user = self.authorization.user(principal)
                if user is not None:
                    tree[0] = self.authorization.prune(user, tree[0])
                document = reads.render(self.ctx, tree[0], request)
            finally:
                nodes.free_all(tree[0])
            revision = operational.state_revision(self.running.revisions.of(request.path), states)
            return ReadResult(document, revision)

    def revision(self, datastore: DatastoreName, path: DataPath | None) -> Revision:
        """The revision of a resource (operational: running's, changed by the state under it)."""
        if datastore is DatastoreName.OPERATIONAL:
            request = ReadRequest(datastore, path)
            regions = operational.provider_paths(self._state, request)
            states = {region: self._state[region]() for region in regions}  # outside the lock
            with self._lock:
                return operational.state_revision(self.running.revisions.of(path), states)
        with self._lock:
            return self.store(datastore).revisions.of(path)

    # ------------------------------------------------------------------ edits

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
        is parsed; one of more than ``shadow_nodes`` on running is worked on a copy
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
        if any(self.secrets.touches(edit) for edit in edits):  # hashed outside the lock
            with self._contexts.borrow() as ctx:
                edits = self.secrets.prepare(ctx, edits)
        if datastore is DatastoreName.CANDIDATE:
            with self._lock:
                return self.candidate.edit(edits, principal, session, test_only=test_only)
        running = datastore is DatastoreName.RUNNING
        problem = self.replication.problem() if running and self.replication else None
        if problem is not None:  # no quorum: refused before any lock, reads go on
            raise unavailable(problem)
        txn = Txn(datastore, principal, session, list(edits), test_only=test_only)
        txn.defer_sync = running
        started = time.perf_counter()
        try:
            with self._write:
                if running and size >= self.settings.shadow_nodes:
                    LOG.info("a large edit of about %d data nodes is worked on a copy", size)
                    self._keep_startup_as_loaded()  # the copy brings its own indexes
                    txn.defer_sync = False
                    revision: Revision = retrying(self, lambda: shadow_transaction(self, txn))
                    self.running.compact_if_due(self.settings.compact_minimum)
                else:
                    with self._lock:
                        revision = self.transaction(txn)
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

    @property
    def read_lock(self) -> threading.RLock:
        """The lock every use of the trees takes (a large edit takes it only to swap)."""
        return self._lock

    @property
    def write_lock(self) -> threading.RLock:
        """The lock every change of running takes first, before :attr:`read_lock`."""
        return self._write

    def transaction(self, txn: Txn) -> Revision:
        """Run one transaction past the session locks (the caller holds the core lock); in a
        cluster, again on the newer state when another replica committed first."""
        return retrying(self, lambda: self._transaction_once(txn))

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
        except StaleError:  # another replica committed first: run again on the newer state
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
        else:
            # durable before it is acknowledged: at once, or (defer_sync) once the caller's
            # sync returns, after the locks are released (group commit)
            txn.ticket = store.persist(txn.edits, defer=txn.defer_sync and running)
            if running:
                self._run_hooks(store, change)
        if running and self.history is not None and not txn.replicated:  # keep how to undo it
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
            return
        for hook in self.registrations.commit_hooks:
            hook(change)
        changed = [record.path for record in applier.applied]
        store.persist(txn.edits, changed=changed, user=txn.principal.user)

    # ------------------------------------------------------------------ cluster

    @property
    def replication(self) -> Replication | None:
        """The cluster's log of commits (None: running has its own journal)."""
        return self.settings.replication

    @property
    def applied(self) -> int:
        """The last transaction of running applied here (in a cluster: the cluster's)."""
        return self.running.txid

    def apply_replicated(self, record: Record) -> None:
        """Apply one commit another replica made (the caller holds both locks)."""
        raw = record.get("edits")
        edits = [edit_from_record(item) for item in raw] if isinstance(raw, list) else []
        principal = Principal(str(record.get("user") or SYSTEM.user))
        txid = int(str(record["txid"]))
        self._transaction_once(Txn(DatastoreName.RUNNING, principal, None, edits, replicated=txid))

    def follow(self) -> None:
        """Apply what the cluster holds, then every commit of the others as it comes."""
        replication = self.replication
        if replication is not None:
            catch_up(self)
            replication.start(self._deliver)

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
            if not txn.replicated:  # audited where it was made
                _audit_commit(txn, store.txid, changed)
        if txn.datastore in (DatastoreName.RUNNING, DatastoreName.STARTUP):
            event = changes.config_change(
                txn.datastore, txn.principal, txn.session, applier.applied
            )
            self.bus.publish("NETCONF", event)
        return revision

    # ------------------------------------------------------------------ review

    def trial(
        self, edits: Sequence[Edit], principal: Principal, *, validate: bool, forward: bool = True
    ) -> list[ChangeItem]:
        """What ``edits`` would change in running, as ``principal`` may read it, changing
        nothing (:func:`review.trial`). With ``validate`` the edits are access-checked as the
        principal's and the result validated, as a commit would be: a dry run."""
        printer = review.reader_printer(self.authorization.user(principal))
        guard = self.guard(principal) if validate else review.UNGUARDED
        with self._lock:
            validator = self.validator if validate else None
            return review.trial(self.running, edits, guard, validator, printer, forward=forward)

    def compare_trees(
        self, old: ConfigStore, new: ConfigStore, principal: Principal
    ) -> list[ChangeItem]:
        """The changes from one whole tree to another, as ``principal`` may read them."""
        printer = review.reader_printer(self.authorization.user(principal))
        with self._lock:
            return review.compare_trees(old, new, printer)

    def rebuilt(self, edits: Sequence[Edit]) -> ConfigStore:
        """A copy of running with ``edits`` applied (the caller closes it)."""
        with self._lock:
            return review.rebuilt(self.running, edits)

    def pending_candidate_edits(self) -> list[Edit] | None:
        """The candidate's edits when replaying them on running gives the candidate (it was
        copied from running as running is now); else None."""
        with self._lock:
            return self.candidate.pending_edits()

    # ------------------------------------------------------------------ whole datastores

    def commit(self, principal: Principal, *, session: str | None = None) -> Revision:
        """Make candidate the running configuration (RFC 6241 8.3.4.1)."""
        return self._datastores.commit(principal, session=session)

    def discard_changes(self, *, session: str | None = None) -> None:
        """Revert candidate to running (RFC 6241 8.3.4.2)."""
        self._datastores.discard_changes(session=session)

    def validate(self, datastore: DatastoreName) -> None:
        """Validate a whole datastore (RFC 6241 8.6), changing nothing."""
        self._datastores.validate(datastore)

    def copy_config(
        self,
        source: DatastoreName,
        target: DatastoreName,
        principal: Principal,
        *,
        session: str | None = None,
    ) -> Revision:
        """Replace a datastore with another's content (RFC 6241 7.3)."""
        return self._datastores.copy_config(source, target, principal, session=session)

    def restore(self, datastore: DatastoreName, document: str, encoding: Encoding) -> Revision:
        """Replace a configuration datastore with a whole document as the server's own action
        (RFC 6241 8.4 confirmed-commit rollback); see :meth:`DatastoreOperations.restore`."""
        return self._datastores.restore(datastore, document, encoding)

    def lock(self, datastore: DatastoreName, session: str) -> None:
        """Take a datastore's lock (RFC 6241 7.5: not candidate with uncommitted changes)."""
        self._datastores.lock(datastore, session)

    def unlock(self, datastore: DatastoreName, session: str) -> None:
        """Release a lock the session holds (RFC 6241 7.6)."""
        self._datastores.unlock(datastore, session)

    def lock_holders(self) -> dict[DatastoreName, str]:
        """The session id holding each locked datastore (ietf-netconf-monitoring, RFC 6022)."""
        return self._datastores.lock_holders()

    def release_session(self, session: str) -> None:
        """Free a closed session's locks; its candidate changes go with the candidate lock."""
        self._datastores.release_session(session)

    # ------------------------------------------------------------------ RPCs

    def invoke(
        self, path: DataPath, input_document: str, encoding: Encoding, principal: Principal
    ) -> str:
        """Validate the input, run the registered handler, validate and return its output.

        Parsing and printing read only the schema and the operation's own trees, so they run
        outside the core lock (libyang leaves the GIL meanwhile); a validation against running
        holds it. Input or output that cannot read running (decided once per operation,
        :func:`rpc.reads_running`) is validated without it, so concurrent invocations
        validate in parallel.
        """
        nodes.clean_errors(self.ctx)
        operation = self._operation(path)
        self.authorization.operation(principal, operation)  # RFC 8341 3.4.4, before the input
        if operation.input_reads_running:
            members = self._input(self.ctx, operation, input_document, encoding)
        else:
            with self._contexts.borrow() as ctx:
                members = self._input(ctx, operation, input_document, encoding)
        # Input is validated first, so a client learns of bad input even before a handler exists.
        handler = self.registrations.rpcs.get(operation.schema_path)
        if handler is None:
            raise refuse("operation-not-supported", f"no handler serves {path}", path)
        try:
            output = handler(principal, members)
        except CatsError:
            raise
        except Exception as exc:
            LOG.exception("the handler of %s failed", path)
            raise operation_failed(f"the handler of {path} failed", path) from exc
        try:
            return self._output(operation, output, encoding)
        except CatsError as exc:  # the server's fault, not the client's (RFC 7950 7.14.3)
            LOG.error("the handler of %s returned invalid output: %s", path, exc)
            raise operation_failed(f"the handler of {path} returned invalid output", path) from exc

    def _input(
        self, ctx: Any, operation: rpc.Operation, document: str, encoding: Encoding
    ) -> dict[str, object]:
        """The validated input members, parsed in ``ctx`` (the core's own context when the
        validation reads running, whose tree lives there; a twin otherwise)."""
        tree, op = rpc.parse_input(ctx, operation, document, encoding)
        try:
            if operation.input_reads_running:
                with self._lock:
                    rpc.validate_input(ctx, tree, self.running.first[0])
            else:
                rpc.validate_input(ctx, tree, None)
            return rpc.members_of(op, operation)
        finally:
            nodes.free_all(tree)

    def _output(
        self, operation: rpc.Operation, output: dict[str, object], encoding: Encoding
    ) -> str:
        if operation.output_reads_running:
            return self._reply(self.ctx, operation, output, encoding)
        with self._contexts.borrow() as ctx:
            return self._reply(ctx, operation, output, encoding)

    def _reply(
        self, ctx: Any, operation: rpc.Operation, output: dict[str, object], encoding: Encoding
    ) -> str:
        tree, op = rpc.parse_output(ctx, operation, output)
        try:
            if operation.output_reads_running:
                with self._lock:
                    rpc.validate_output(ctx, tree, self.running.first[0])
            else:
                rpc.validate_output(ctx, tree, None)
            return rpc.print_output(op, operation, encoding)
        finally:
            nodes.free_all(tree)

    def _operation(self, path: DataPath) -> rpc.Operation:
        """The operation at a path; RPCs are resolved once (their paths are a fixed set)."""
        found = self._operations.get(path)
        if found is None:
            found = rpc.resolve(self.ctx, path)
            if found.is_rpc:
                self._operations[path] = found
        return found

    # ------------------------------------------------------------------ notifications

    def publish(self, stream: str, document: str) -> Notification:
        """Validate an application notification and put it on a stream (and NETCONF's).

        Parsing and printing read only the schema, and a notification that cannot read
        running (:func:`rpc.notification_reads_running`, decided once per notification) is
        validated without it, so only the delivery holds the core lock. Such a notification,
        once known by its JSON member name, is parsed in a twin context (as an RPC's input).
        """
        encoding = _encoding_of(document)
        member = rpc.first_member(document) if encoding is Encoding.JSON else None
        name = None if member is None else member.group(1)
        if name is not None and self._free_notifications.get(name):
            with self._contexts.borrow() as ctx:
                canonical = self._canonical(ctx, document, encoding, None)
        else:
            canonical = self._canonical(self.ctx, document, encoding, name)
        with self._lock:  # before the bus's own guard, as subscribe takes them
            return self.bus.publish(stream, canonical)

    def _canonical(self, ctx: Any, document: str, encoding: Encoding, name: str | None) -> str:
        """The validated notification as libyang prints it. In the core's context (``ctx``
        is self.ctx) it also learns whether the notification named ``name`` reads running."""
        tree, notification = nodes.parse_op(ctx, document, encoding, _NOTIF)
        try:
            reads = False  # a twin only gets notifications known to read no configuration
            if ctx == self.ctx:
                reads = self._notification_reads_running(notification)
                if name is not None and notification == tree:  # top-level: known by name
                    self._free_notifications[name] = not reads
            if reads:
                with self._lock:
                    self._validate_notification(ctx, tree, self.running.first[0])
            else:
                self._validate_notification(ctx, tree, None)
            flags = nodes.lib.LYD_PRINT_WITHSIBLINGS | nodes.lib.LYD_PRINT_SHRINK
            return nodes.print_tree(tree, Encoding.JSON, flags)
        finally:
            nodes.free_all(tree)

    @staticmethod
    def _validate_notification(ctx: Any, tree: nodes.Node, dep: nodes.Node) -> None:
        if nodes.lib.lyd_validate_op(tree, dep or nodes.ffi.NULL, _NOTIF, nodes.ffi.NULL):
            raise nodes.fail(ctx)

    def _notification_reads_running(self, notification: nodes.Node) -> bool:
        """Whether the notification's validation needs running; asked once per schema node."""
        if notification is None or notification == nodes.ffi.NULL:
            return True
        key = int(nodes.ffi.cast("uintptr_t", notification.schema))
        found = self._notifications.get(key)
        if found is None:
            found = self._notifications[key] = rpc.notification_reads_running(notification.schema)
        return found

    def subscribe(
        self,
        stream: str,
        *,
        start_time: datetime | None = None,
        stop_time: datetime | None = None,
        xpath_filter: str | None = None,
        principal: Principal = SYSTEM,
    ) -> Subscription:
        """Subscribe to a stream, replaying the bounded log from ``start_time``; only the
        events ``principal`` may receive are delivered (RFC 8341 3.4.6)."""
        with self._lock:
            return self.bus.subscribe(
                stream,
                start_time=start_time,
                stop_time=stop_time,
                xpath_filter=xpath_filter,
                subscriber=None
                if principal == SYSTEM
                else Subscriber(principal.user, self.authorization.admit(principal)),
            )

    def streams(self) -> tuple[StreamInfo, ...]:
        """The event streams, ``NETCONF`` first (RFC 8040 9.2.1, RFC 5277 3.1)."""
        return self.bus.streams()

    def _matches(self, document: str, xpath: str) -> bool:
        with self._lock:
            try:
                tree, _ = nodes.parse_op(self.ctx, document, Encoding.JSON, _NOTIF)
            except CatsError:
                return False
            try:
                return bool(nodes.find_all(self.ctx, tree, xpath))
            except CatsError:
                return False
            finally:
                nodes.free_all(tree)


_NOTIF = nodes.lib.LYD_TYPE_NOTIF_YANG


def _audit_commit(txn: Txn, commit_id: int, changed: Sequence[DataPath]) -> None:
    """One audit record per commit of running: its operation, size and first paths."""
    info = current_request()
    listed = ", ".join(str(path) or "/" for path in changed[:4])
    more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""  # noqa: PLR2004
    comment = f"; comment: {info.comment}" if info.comment else ""
    event = Event.ROLLBACK if info.operation == "rollback" else Event.COMMIT
    detail = f"{info.operation or 'edit'}: {len(changed)} change(s): {listed}{more}{comment}"
    audit(event, txn.principal.user, commit_id=commit_id, session=txn.session, detail=detail)


def _encoding_of(document: str) -> Encoding:
    return Encoding.XML if document.lstrip().startswith("<") else Encoding.JSON


class _TestOnlyError(Exception):
    """Unwinds a test-only transaction after validation, into its rollback."""


__all__ = ["SYSTEM", "Core", "CoreSettings"]
