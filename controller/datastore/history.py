"""Commit history as the core records it: the reverse edits of a transaction, kept per commit.

A transaction's undo log (:mod:`.undo`) already says, by data path, how to put back what each
step changed; :func:`reverse_edits` turns it into edits (journal form) that undo the commit when
applied newest first, at the cost of printing the kept copies (O(change), never O(datastore),
except for a replace of the whole datastore, which is O(datastore) anyway). A rollback applies
the reverse edits of every commit after its target as one transaction
(:mod:`controller.admin`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Mapping, Sequence

from controller.audit import CommitEntry, HistoryStore, RequestInfo
from controller.audit import current as current_request
from controller.audit.events import now_text
from controller.datastore import datapath
from controller.datastore.api import Edit, EditOperation, InsertWhere
from controller.datastore.stores import ConfigStore, edit_from_record, edit_record
from controller.datastore.transaction import Applied, Txn
from controller.datastore.undo import UndoKind, UndoRecord
from controller.model import nodes
from controller.model.schema import Encoding
from controller.observability.metrics import HISTORY_FAILURES
from controller.types import DataPath

LOG = logging.getLogger(__name__)
#: How many changed paths a commit entry lists.
CHANGED_LISTED = 16
#: The operation a replica's history names the cluster's snapshot with, when it loaded it
#: (docs/cluster.md): not a user's commit, and no rollback past it.
SNAPSHOT_OPERATION = "cluster-snapshot"
#: The reverse edits kept for a loaded snapshot: none (what it replaced was this replica's).
NO_REVERSE = "null"
#: What a cluster's record carries of a commit for the history (besides txid, user, edits).
_META = ("time", "transport", "source", "session", "operation", "comment", "label")


def _printed(node: nodes.Node, *, siblings: bool = False) -> str:
    if not node:
        return "{}"
    flags = nodes.lib.LYD_PRINT_WITHSIBLINGS if siblings else 0
    return nodes.print_tree(node, Encoding.JSON, flags)


def _put_back(record: UndoRecord, *, user_ordered: bool) -> Edit:
    """The edit that restores a changed or deleted node at its place; a node that held only
    its defaults prints as nothing, and is put back by removing what was written into it (the
    defaults come back by themselves, RFC 6243 2.3.3)."""
    value = _printed(record.saved)
    if "".join(value.split()) in ("", "{}"):
        return Edit(EditOperation.REMOVE, record.path)
    if record.before is not None:
        return Edit(
            EditOperation.REPLACE,
            record.path,
            value,
            Encoding.JSON,
            InsertWhere.BEFORE,
            record.before,
        )
    where = InsertWhere.LAST if user_ordered else None
    return Edit(EditOperation.REPLACE, record.path, value, Encoding.JSON, where)


def reverse_edit(record: UndoRecord) -> Edit:
    """The edit that undoes one step of a transaction."""
    if record.kind is UndoKind.ROOT:
        document = _printed(record.saved, siblings=True)
        return Edit(EditOperation.REPLACE, datapath.ROOT, document, Encoding.JSON)
    if record.kind is UndoKind.REMOVE:
        return Edit(EditOperation.REMOVE, record.path)
    if record.kind is UndoKind.MOVE:
        if record.before is not None:
            return Edit(
                EditOperation.MOVE,
                record.path,
                None,
                Encoding.JSON,
                InsertWhere.BEFORE,
                record.before,
            )
        return Edit(EditOperation.MOVE, record.path, None, Encoding.JSON, InsertWhere.LAST)
    user_ordered = bool(record.saved) and nodes.is_user_ordered(record.saved)
    return _put_back(record, user_ordered=user_ordered)


def reverse_edits(records: Sequence[UndoRecord]) -> list[Edit]:
    """The edits that undo a transaction, in the order to apply them (newest step first)."""
    return [reverse_edit(record) for record in reversed(records)]


def encode(edits: Sequence[Edit]) -> str:
    """Reverse edits as kept (a JSON list of journal edit records)."""
    return json.dumps([edit_record(edit) for edit in edits], separators=(",", ":"))


def changed_paths(applied: Sequence[Applied]) -> tuple[str, ...]:
    """The first :data:`CHANGED_LISTED` distinct paths a transaction changed."""
    seen: dict[str, None] = {}
    for record in applied:
        seen.setdefault(record.path or "/", None)
        if len(seen) >= CHANGED_LISTED:
            break
    return tuple(seen)


def commit_meta(txn: Txn, info: RequestInfo, time: str) -> dict[str, str]:
    """What the cluster's record of a commit carries for every replica's history: when, and
    the request's context (empty fields left out; never the edits' values)."""
    session = txn.session if txn.session is not None else info.session
    values = (time, info.transport, info.source, session, info.operation, info.comment, info.label)
    return {name: value for name, value in zip(_META, values, strict=True) if value}


def persist_commit(
    store: ConfigStore, txn: Txn, changed: Sequence[DataPath], node: str | None = None
) -> None:
    """Make a commit of running made here durable (:meth:`ConfigStore.persist`, not deferred).
    In a cluster its record carries the history's context (:func:`commit_meta`, kept in
    ``txn.meta`` for this replica's own entry and audit record, with ``node``, this replica)
    and the session the lock of running is checked against (none for the server's own
    commit: ``past_locks``)."""
    if store.replication is not None:
        txn.meta = commit_meta(txn, current_request(), now_text())
        if node is not None:
            txn.meta["node"] = node
    store.persist(
        txn.edits,
        changed=changed,
        user=txn.principal.user,
        meta=txn.meta,
        session=None if txn.past_locks else txn.session,
        past_locks=txn.past_locks,
    )


def meta_of(record: Mapping[str, object]) -> dict[str, str]:
    """:func:`commit_meta` as a cluster's record holds it, with the ``node`` that made the
    commit (its audit record names it); fields it lacks are left out."""
    names = (*_META, "node")
    return {name: str(record[name]) for name in names if record.get(name) is not None}


def request_of(meta: Mapping[str, str]) -> RequestInfo:
    """The request context a commit's :func:`commit_meta` (or :func:`meta_of`) holds."""
    return RequestInfo(
        meta.get("transport", "server"),
        meta.get("source", ""),
        meta.get("session"),
        meta.get("operation"),
        meta.get("comment"),
        meta.get("label"),
    )


class HistoryRecorder:
    """Keeps every commit of running in a :class:`~controller.audit.HistoryStore`."""

    def __init__(self, store: HistoryStore) -> None:
        self.store = store

    def record(
        self,
        commit_id: int,
        txn: Txn,
        info: RequestInfo,
        *,
        applied: Sequence[Applied],
        undo: Sequence[UndoRecord],
    ) -> CommitEntry | None:
        """Keep one commit (called after it is durable, before the undo log is dropped). A
        store that fails is logged; the commit stands (its rollback is then impossible).

        In a cluster, ``txn.meta`` (the commit's time and context as the cluster's record has
        them, :func:`commit_meta`) stands for ``info`` and the clock: the same entry on every
        replica. A loaded snapshot (operation :data:`SNAPSHOT_OPERATION`) is kept without
        reverse edits, and not over the commit of that number when this replica has it.
        """
        meta = txn.meta
        if meta is not None:
            info = request_of(meta)
        snapshot = info.operation == SNAPSHOT_OPERATION
        entry = CommitEntry(
            commit_id,
            now_text() if meta is None else meta.get("time", now_text()),
            txn.principal.user,
            info.transport,
            info.source,
            txn.session if txn.session is not None else info.session,
            info.operation,
            info.comment,
            info.label,
            len(applied),
            changed_paths(applied),
        )
        try:
            if snapshot and self.store.entry(commit_id) is not None:
                return None  # the commit itself, as this replica applied it before
            reverse = NO_REVERSE if snapshot else encode(reverse_edits(undo))
            self.store.append(entry, reverse)
        except (sqlite3.Error, OSError) as exc:
            HISTORY_FAILURES.inc()
            LOG.error("history: cannot keep commit %d: %s", commit_id, exc)
            return None
        return entry


def decode(document: str) -> list[Edit]:
    """Reverse edits as :func:`encode` kept them."""
    return [edit_from_record(item) for item in json.loads(document)]
