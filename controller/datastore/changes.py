"""What a committed transaction changed: the diff, the config-change event, the audit record.

The diff follows libyang's diff format (RFC 7951 JSON with ``yang:operation`` metadata on the
changed nodes and ``none`` on their ancestors), built from the edit's own records rather than
by comparing trees (``lyd_diff_siblings`` is quadratic, 11 s at 100k entries). The event is
``ietf-netconf-notifications:netconf-config-change`` (RFC 6470 2.2).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from controller.audit import Event
from controller.audit import current as current_request
from controller.audit import record as audit
from controller.audit.events import has_commit
from controller.datastore import datapath
from controller.datastore.api import Access, DatastoreName, Principal
from controller.datastore.history import SNAPSHOT_OPERATION, request_of
from controller.datastore.transaction import Applied, Txn
from controller.datastore.tree import Tree
from controller.model import nodes
from controller.model.schema import Encoding
from controller.types import DataPath

CONFIG_CHANGE = "ietf-netconf-notifications:netconf-config-change"
_OPERATION = {Access.CREATE: "create", Access.UPDATE: "replace", Access.DELETE: "delete"}
_EVENT_OPERATION = {Access.CREATE: "create", Access.UPDATE: "merge", Access.DELETE: "delete"}


def _mark(ctx: Any, node: Any, operation: str) -> None:
    nodes.lib.lyd_new_meta(
        ctx, node, nodes.ffi.NULL, b"yang:operation", operation.encode(), 0, nodes.ffi.NULL
    )
    parent = nodes.parent_of(node)
    while parent is not None:
        if not parent.meta:
            nodes.lib.lyd_new_meta(
                ctx, parent, nodes.ffi.NULL, b"yang:operation", b"none", 0, nodes.ffi.NULL
            )
        parent = nodes.parent_of(parent)


def _with_parents(ctx: Any, source: Any, path: DataPath) -> Any:
    """A copy of ``source`` under copies of its ancestors (``source`` may be detached)."""
    if source.parent:
        return nodes.dup(source, with_parents=True)
    copy = nodes.dup(source)
    parent_path = datapath.parent(path)
    if parent_path != datapath.ROOT:
        top = nodes.new_path(ctx, None, parent_path)
        nodes.link(nodes.find(ctx, top, parent_path), None, copy)
    return copy


def diff_document(ctx: Any, tree: Tree, applied: Sequence[Applied]) -> str:
    """The diff of a transaction, from the tree after it and the copies of what it removed."""
    diff = nodes.ffi.new("struct lyd_node **", nodes.ffi.NULL)
    try:
        for record in applied:
            if record.path == datapath.ROOT:
                continue
            source = record.old if record.access is Access.DELETE else None
            if source is None:
                source = tree.find(record.path)
            if source is None:
                continue
            copy = _with_parents(ctx, source, record.path)
            _mark(ctx, copy, _OPERATION[record.access])
            if nodes.lib.lyd_merge_tree(diff, nodes.top_of(copy), nodes.lib.LYD_MERGE_DESTRUCT):
                nodes.lib.ly_err_clean(ctx, nodes.ffi.NULL)
        if not diff[0]:
            return "{}"
        flags = nodes.lib.LYD_PRINT_WITHSIBLINGS | nodes.lib.LYD_PRINT_SHRINK
        return nodes.print_tree(diff[0], Encoding.JSON, flags)
    finally:
        nodes.free_all(diff[0])


def config_change(
    datastore: DatastoreName, principal: Principal, session: str | None, applied: Sequence[Applied]
) -> str:
    """The netconf-config-change notification of a commit (RFC 6470 2.2)."""
    session_id = int(session) if session is not None and session.isdigit() else 0
    edits = [
        {"target": record.path, "operation": _EVENT_OPERATION[record.access]}
        for record in applied
        if record.path != datapath.ROOT
    ]
    event: dict[str, object] = {
        "changed-by": {"username": principal.user, "session-id": session_id},
        "datastore": datastore.value,
    }
    if edits:
        event["edit"] = edits
    return json.dumps({CONFIG_CHANGE: event})


def audit_commit(txn: Txn, commit_id: int, changed: Sequence[DataPath]) -> None:
    """One audit record per commit of running: its operation, size and first paths.

    In a cluster every replica records every commit of the cluster (docs/cluster.md): the one
    that made it as it commits, the others as they apply it, all from what the cluster's
    record holds (``txn.meta``: time, transport, source, session, operation, comment, and the
    ``node`` that made it), so the record is the same on every replica. A commit recorded
    already (a replica applies the log again when it starts) is not recorded twice; a loaded
    snapshot is not a commit and is not recorded.
    """
    meta = txn.meta
    info = current_request() if meta is None else request_of(meta)
    if info.operation == SNAPSHOT_OPERATION:
        return
    time = None if meta is None else meta.get("time")
    if txn.replicated and time is not None and has_commit(commit_id, time):
        return
    listed = ", ".join(str(path) or "/" for path in changed[:4])
    more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""  # noqa: PLR2004
    comment = f"; comment: {info.comment}" if info.comment else ""
    event = Event.ROLLBACK if info.operation == "rollback" else Event.COMMIT
    detail = f"{info.operation or 'edit'}: {len(changed)} change(s): {listed}{more}{comment}"
    audit(
        event,
        txn.principal.user,
        commit_id=commit_id,
        session=txn.session if txn.session is not None else info.session,
        transport=info.transport,
        source=info.source,
        detail=detail,
        time=time,
        node=None if meta is None else meta.get("node"),
    )
