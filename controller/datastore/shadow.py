"""Large transactions on running, worked on a copy while readers keep the committed tree.

A transaction of many nodes (a 100k-entry edit: seconds to minutes of parsing, merging and
validating in libyang) would hold the core's lock, and every read, for all that time. So an
edit past :data:`SHADOW_NODES` data nodes runs here instead: under the core's write lock only
(writers still go one at a time, and every other write of running waits), it copies running,
applies the edits to the copy, validates the copy in full, computes the diff, rebuilds the
indexes and makes the commit durable, all while readers read the committed tree under the
read lock. Only the copy (a read restricted by NACM unlinks nodes of the live tree for its
time, :mod:`.hiding`, so the copy waits for it), the swap of the trees, the commit hooks and
the notification take the read lock. A commit hook that refuses puts the old tree back and
the journal forgets the record. The commit of a large candidate and a copy-config to running
come here too, as the edits they are (:mod:`.operations`); a large copy-config to startup
(saving the configuration) is worked on a copy of startup the same way
(:func:`startup_transaction`).

Revisions of a large edit are coarse: each edit's target is marked as changed as a whole
(RFC 8040 3.4.1: an entity-tag may change more often than its resource, never less).
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any, Protocol

from controller.audit import current as current_request
from controller.datastore import changes
from controller.datastore.access import Guard
from controller.datastore.api import (
    Change,
    Edit,
    Principal,
    Registrations,
    Revision,
)
from controller.datastore.authorization import Authorization
from controller.datastore.bus import NotificationBus
from controller.datastore.history import HistoryRecorder, persist_commit
from controller.datastore.stores import ConfigStore
from controller.datastore.transaction import Applier, Txn
from controller.datastore.validation import Validator, validate_full
from controller.model import nodes
from controller.model.schema import Encoding

LOG = logging.getLogger(__name__)
SHADOW_NODES = 20_000  # data nodes of an edit from which it is worked on a copy
_JSON_MEMBER = re.compile(r'"\s*:')


def edit_nodes(edits: list[Edit]) -> int:
    """About how many data nodes the edits hold, counted without parsing them: JSON member
    names (each leaf, container and list entry member), XML start tags."""
    total = 0
    for edit in edits:
        value = edit.value or ""
        if edit.encoding is Encoding.JSON:
            total += len(_JSON_MEMBER.findall(value))
        else:
            total += value.count("<") - value.count("</")
    return total


class CopyHost(Protocol):
    """What working a transaction on a copy needs of the core."""

    ctx: Any

    @property
    def read_lock(self) -> threading.RLock:
        """The lock readers take (the core's lock)."""
        ...

    def guard(self, principal: Principal) -> Guard:
        """The access guard of the principal's edits (RFC 8341 3.4.5)."""
        ...


class ShadowHost(CopyHost, Protocol):
    """What a large transaction of running needs of the core."""

    running: ConfigStore
    validator: Validator
    authorization: Authorization
    bus: NotificationBus
    registrations: Registrations
    history: HistoryRecorder | None

    @property
    def node(self) -> str | None:
        """This replica's name in a cluster (its commits' audit records name it)."""
        ...


def _applied_copy(core: CopyHost, store: ConfigStore, txn: Txn) -> tuple[ConfigStore, Applier]:
    """A copy of ``store`` (taken under the read lock: a read hidden by NACM unlinks nodes of
    the live tree meanwhile) with the transaction's edits applied and validated in full; the
    caller frees both with :func:`_free`. Raises with nothing left behind."""
    shadow = ConfigStore(core.ctx, store.name, None)
    with core.read_lock:
        shadow.replace_tree(store.copy_tree())
    applier = Applier(core.ctx, shadow.tree, core.guard(txn.principal), coarse=True)
    try:
        for edit in txn.edits:
            applier.apply(edit)
        validate_full(shadow)
    except BaseException:
        _free(shadow, applier)
        raise
    return shadow, applier


def _free(shadow: ConfigStore, applier: Applier) -> None:
    applier.undo.commit()  # frees the copies it kept (the diff has been made)
    shadow.close()


def shadow_transaction(core: ShadowHost, txn: Txn) -> Any:
    """Run a large transaction of running on a copy (the caller holds the write lock, not the
    read lock); returns the new revision, or raises with running untouched."""
    running = core.running
    shadow, applier = _applied_copy(core, running, txn)
    try:
        prepared = core.validator.prepared(shadow)
        diff = changes.diff_document(core.ctx, shadow.tree, applier.applied)
        if txn.test_only:
            return running.revisions.of(None)
        changed = [record.path for record in applier.applied]
        # durable (in a cluster: the cluster's) before anyone sees it
        persist_commit(running, txn, changed, core.node)
        with core.read_lock:
            change = Change(
                txn.datastore, txn.principal, diff, tuple(changed), running.revisions.prepare()
            )
            old = running.tree.replace(shadow.tree.replace(nodes.ffi.NULL))
            try:
                for hook in core.registrations.commit_hooks:
                    hook(change)
            except BaseException:
                nodes.free_all(running.tree.replace(old))
                running.retract()
                raise
            core.validator.install(prepared)
            revision = running.revisions.record(changed, changed)
            core.authorization.after_commit(running.first[0], changed)
            event = changes.config_change(
                txn.datastore, txn.principal, txn.session, applier.applied
            )
            core.bus.publish("NETCONF", event)
        changes.audit_commit(txn, running.txid, changed)
        if core.history is not None:  # durable and current: keep how to undo it
            undo = applier.undo.records
            core.history.record(
                running.txid, txn, current_request(), applied=applier.applied, undo=undo
            )
        nodes.free_all(old)  # outside the read lock: O(datastore)
        LOG.info("a large edit of %d changes was made current", len(changed))
        return revision
    finally:
        _free(shadow, applier)


class StartupHost(CopyHost, Protocol):
    """What a large transaction of startup needs of the core."""

    bus: NotificationBus

    @property
    def startup(self) -> ConfigStore:
        """The startup datastore."""
        ...

    def persist_startup(self, store: ConfigStore, txn: Txn, edited: ConfigStore) -> None:
        """Make the change durable: ``edited`` holds startup after it (in a cluster, the
        cluster's startup)."""
        ...


def startup_transaction(core: StartupHost, txn: Txn) -> Revision:
    """Run a large transaction of startup on a copy (the caller holds the write lock, not the
    read lock): applied, validated in full and made durable off the read lock, swapped in
    under it; returns the new revision, or raises with startup untouched."""
    store = core.startup
    shadow, applier = _applied_copy(core, store, txn)
    try:
        if txn.test_only:
            return store.revisions.of(None)
        changed = [record.path for record in applier.applied]
        core.persist_startup(store, txn, shadow)  # durable (a cluster's) before anyone sees it
        with core.read_lock:
            old = store.tree.replace(shadow.tree.replace(nodes.ffi.NULL))
            revision: Revision = store.revisions.record(changed, changed)
            event = changes.config_change(
                txn.datastore, txn.principal, txn.session, applier.applied
            )
            core.bus.publish("NETCONF", event)
        nodes.free_all(old)  # outside the read lock: O(datastore)
        LOG.info("a large edit of startup of %d changes was made current", len(changed))
        return revision
    finally:
        _free(shadow, applier)
