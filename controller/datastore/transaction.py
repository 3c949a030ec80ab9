"""Apply edits to a datastore tree in place, with an undo log (RFC 6241 7.2, RFC 8072 2.5).

:class:`Applier` parses each edit's value strictly without validating it (types, ranges, names
and keys are checked by the parser), resolves the operation against the tree with key lookups
(``data-exists``, ``data-missing``), asks the access check, and applies it, recording how to
undo it. What each edit did is returned as :class:`Applied` records: they drive validation,
revisions, the journal, the diff and the notifications.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from controller.datastore import access, bulk, datapath
from controller.datastore.access import Guard
from controller.datastore.api import (
    Access,
    DatastoreName,
    Edit,
    EditOperation,
    InsertWhere,
    Principal,
)
from controller.datastore.errors import DatastoreError, refuse
from controller.datastore.indexes import descendants
from controller.datastore.journal import Ticket
from controller.datastore.tree import Tree
from controller.datastore.undo import (
    UndoKind,
    UndoLog,
    UndoRecord,
    next_instance_path,
    next_sibling_path,
)
from controller.errors import CatsError, ErrorItem
from controller.model import nodes
from controller.model.nodes import Node
from controller.model.schema import Encoding
from controller.types import DataPath

_CREATING = (EditOperation.CREATE, EditOperation.INSERT)
_REMOVING = (EditOperation.DELETE, EditOperation.REMOVE)
_RESTCONF_DATA = "ietf-restconf:data"
_UNSET = DataPath("")  # Applied.created_from before __post_init__


@dataclass
class Txn:
    """What a running transaction needs besides the tree."""

    datastore: DatastoreName
    principal: Principal
    session: str | None
    edits: list[Edit] = field(default_factory=list)
    test_only: bool = False
    #: Set by a commit of running whose journal fsync is left to the caller (group commit):
    #: it must call ``ConfigStore.sync(ticket)`` before it acknowledges the edit.
    defer_sync: bool = False
    ticket: Ticket | None = None
    #: A commit another replica of the cluster made (its txid; 0: this server's own): it was
    #: access-checked and is persisted there, so it is applied here unguarded, unpersisted.
    replicated: int = 0
    #: In a cluster: the commit's time and request context as the cluster's record carries
    #: them (:func:`controller.datastore.history.commit_meta`), for every replica's history.
    meta: dict[str, str] | None = None
    #: The server's own transaction (a confirmed commit's rollback), which no session's lock
    #: refuses: in a cluster, its commit is not guarded on the lock of running.
    past_locks: bool = False


@dataclass(frozen=True, slots=True)
class Applied:
    """What one edit did to one node: its canonical path, and how."""

    path: DataPath
    access: Access  # CREATE, UPDATE or DELETE
    whole: tuple[DataPath, ...] = ()  # subtrees entirely new, replaced or gone (revisions)
    old: Node = field(default=None, compare=False)  # the copy kept by the undo log, if any
    created_from: DataPath = _UNSET  # the highest node this edit created (its path when none above)

    def __post_init__(self) -> None:
        if not self.created_from:
            object.__setattr__(self, "created_from", self.path)


def is_default(node: Node | None) -> bool:
    """Whether a node exists only through its default (``LYD_DEFAULT``: a leaf with its
    default value, a non-presence container holding nothing else). Such a node does not exist
    for create and delete (RFC 6243 2.3.3, RFC 6241 7.2, RFC 8040 4.4.1)."""
    if node is None or not node.flags & nodes.lib.LYD_DEFAULT:
        return False
    # a container keeps the flag when an explicit child is merged into it: ask the children
    return all(is_default(child) for child in nodes.children(node))


def unwrap_root(text: str, encoding: Encoding) -> str:
    """A datastore document without an ``ietf-restconf:data`` wrapper (RFC 8040 3.3.1)."""
    if encoding is Encoding.JSON and _RESTCONF_DATA in text:
        document = json.loads(text)
        if isinstance(document, dict) and set(document) == {_RESTCONF_DATA}:
            return json.dumps(document[_RESTCONF_DATA])
    return text


class Applier:
    """Applies edits to a store's tree (its top-level nodes through the tree's key index)."""

    def __init__(self, ctx: Any, tree: Tree, guard: Guard, *, coarse: bool = False) -> None:
        self.ctx = ctx
        self.coarse = coarse  # a merge changes its target as a whole (large edits)
        self.tree = tree
        self.first = tree.first
        self.undo = UndoLog(ctx, tree)
        self.guard = guard  # asked about every node changed (RFC 8341 3.4.5)
        self.applied: list[Applied] = []
        self._pending: Node = None

    def find(self, path: DataPath) -> Node | None:
        """The node at a data path in the tree."""
        return self.tree.find(path)

    def apply(self, edit: Edit) -> None:
        """Apply one edit (raises, with the tree partly changed: the caller rolls back)."""
        if edit.path in (datapath.ROOT, ""):
            self._apply_root(edit)
            return
        existing = self.find(edit.path)
        if edit.operation in _REMOVING:
            self._remove(edit, None if is_default(existing) else existing)
        elif edit.operation is EditOperation.MOVE:
            self._move(edit, existing)
        elif not is_default(existing) and existing is not None and edit.operation in _CREATING:
            raise refuse("data-exists", "the node already exists", nodes.path_of(existing))
        else:
            self._write(edit, existing)  # a default-only node is written over (update)

    # ------------------------------------------------------------------ parsing

    def parse_value(self, edit: Edit) -> tuple[Node, Node]:
        """Parse the value of a non-root edit: (scratch tree top, the target node in it)."""
        if edit.value is None:
            raise refuse("missing-element", f"{edit.operation} needs a value", edit.path)
        parent_path = datapath.parent(edit.path)
        if parent_path == datapath.ROOT:
            top = nodes.parse_data(self.ctx, edit.value, edit.encoding)
            parsed = list(nodes.siblings(top))
        else:
            top = nodes.new_path(self.ctx, None, parent_path)
            parent = nodes.find(self.ctx, top, parent_path)
            before = {nodes.native.address(child) for child in nodes.children(parent)}
            try:
                nodes.parse_data(self.ctx, edit.value, edit.encoding, parent)
            except CatsError as exc:
                nodes.free_all(top)
                raise DatastoreError(*(_under(item, parent_path) for item in exc.items)) from exc
            parsed = [c for c in nodes.children(parent) if nodes.native.address(c) not in before]
        target = nodes.find(self.ctx, top, edit.path) if top else None
        if len(parsed) != 1 or target is None or target != parsed[0]:
            nodes.free_all(top)
            raise refuse("invalid-value", "the value must be exactly the target node", edit.path)
        return top, target

    # ------------------------------------------------------------------ operations

    def _remove(self, edit: Edit, existing: Node | None) -> None:
        if existing is None:
            if edit.operation is EditOperation.DELETE:
                raise refuse("data-missing", "the node does not exist", edit.path)
            return
        path = nodes.path_of(existing)
        self.guard.changes(access.changes(None, existing, replace=True))
        record = UndoRecord(UndoKind.RESTORE, path, None, next_instance_path(existing))
        self.tree.unlink(existing)
        record.saved = existing  # the unlinked subtree itself is the undo copy
        self.undo.add(record)
        self.applied.append(Applied(path, Access.DELETE, (path,), existing))

    def _write(self, edit: Edit, existing: Node | None) -> None:
        """create, merge, replace and insert of one node."""
        top, value = self.parse_value(edit)
        self._pending = top
        try:
            self._write_parsed(edit, existing, top, value)
        finally:
            if self._pending is not None:  # not consumed by a merge
                nodes.free_all(self._pending)
            self._pending = None

    def _write_parsed(self, edit: Edit, existing: Node | None, top: Node, value: Node) -> None:
        if existing is None:
            path = nodes.path_of(value)
            created = self._first_missing(path)
            if self.guard.active:
                self.guard.subtree(Access.CREATE, nodes.find(self.ctx, top, created))
            self._merge(top)
            self.undo.add(UndoRecord(UndoKind.REMOVE, created))
            self._position(edit, path)
            self.applied.append(Applied(path, Access.CREATE, (path,), created_from=created))
            return
        path = nodes.path_of(existing)
        if self.guard.active:
            replace = edit.operation is EditOperation.REPLACE
            self.guard.changes(access.changes(value, existing, replace=replace))
        old = nodes.dup(existing)
        before = next_sibling_path(existing)
        self.undo.add(UndoRecord(UndoKind.RESTORE, path, old, next_instance_path(existing)))
        if edit.operation is EditOperation.REPLACE:
            if value != top and nodes.in_place(existing, value):
                # an ordered-by system entry keeps its place (relinked, libyang would append
                # it at its list's end); the rest of the scratch tree is freed after
                nodes.native.unlink(value)
                nodes.take_content(existing, value)
            else:
                self.tree.free(existing)
                self._merge(top)
                if before is not None:
                    self._move_to(path, InsertWhere.BEFORE, before)
            whole: tuple[DataPath, ...] = (path,)
        else:
            whole = (path,) if self.coarse else tuple(_terminal_paths(value))
            self._merge(top)
        self._position(edit, path)
        self.applied.append(Applied(path, Access.UPDATE, whole, old))

    def _merge(self, top: Node) -> None:
        """Merge a scratch tree (consumed) into the datastore."""
        self._pending = None
        self.tree.merge(top)

    def _first_missing(self, path: DataPath) -> DataPath:
        """The path of the highest ancestor-or-self of ``path`` that does not exist yet."""
        parts = datapath.steps(path)
        for index in range(1, len(parts) + 1):
            prefix = datapath.join(parts[:index])
            if self.find(prefix) is None:
                return prefix
        return path

    def _move(self, edit: Edit, existing: Node | None) -> None:
        if existing is None:
            raise refuse("data-missing", "the entry to move does not exist", edit.path)
        if not nodes.is_user_ordered(existing):
            raise refuse("bad-attribute", "only ordered-by user entries move", edit.path)
        path = nodes.path_of(existing)
        self.guard.node(Access.UPDATE, existing)  # the order of the list changes
        self.undo.add(UndoRecord(UndoKind.MOVE, path, None, next_sibling_path(existing)))
        self._position(edit, path, default=InsertWhere.LAST)
        self.applied.append(Applied(path, Access.UPDATE, (datapath.parent(path),)))

    def _position(self, edit: Edit, path: DataPath, default: InsertWhere | None = None) -> None:
        where = edit.where or default
        if where is None:
            return
        node = self.find(path)
        if node is None or not nodes.is_user_ordered(node):
            raise refuse("bad-attribute", "insert applies to ordered-by user entries", path)
        if where in (InsertWhere.BEFORE, InsertWhere.AFTER) and edit.point is None:
            raise refuse("missing-attribute", f"insert {where} needs a point", path)
        self._move_to(path, where, edit.point)

    def _move_to(self, path: DataPath, where: InsertWhere, point: DataPath | None) -> None:
        node = self.find(path)
        anchor = self._anchor(node, where, point)
        if anchor is None or anchor == node:
            return
        self.tree.unlink(node)
        if where is InsertWhere.AFTER or where is InsertWhere.LAST:
            self.tree.move_after(anchor, node)
        else:
            self.tree.move_before(anchor, node)

    def _anchor(self, node: Node, where: InsertWhere, point: DataPath | None) -> Node | None:
        if where in (InsertWhere.BEFORE, InsertWhere.AFTER):
            anchor = self.find(point or DataPath(""))
            if anchor is None or anchor.schema != node.schema:  # RFC 7950 15.7
                leaf_list = bool(node.schema.nodetype & nodes.lib.LYS_LEAFLIST)
                raise refuse(
                    "bad-attribute",
                    "the insert point does not exist",
                    point,
                    app_tag="missing-instance",
                    info=(("bad-attribute", "value" if leaf_list else "key"),),
                )
            return anchor
        same = [sibling for sibling in _instances(node)]
        return same[0] if where is InsertWhere.FIRST else same[-1]

    # ------------------------------------------------------------------ the root

    def _check_root(self, top: Node) -> None:
        """Per-node checks of a replace (``top``) or delete (None) of the whole datastore."""
        try:
            found = access.sibling_changes(top, None, replace=True, old_first=self.first[0])
            self.guard.changes(found)
        except CatsError:
            nodes.free_all(top)
            raise

    def _apply_root(self, edit: Edit) -> None:
        if edit.operation in _REMOVING or edit.operation is EditOperation.REPLACE:
            top = None
            if edit.operation is EditOperation.REPLACE:
                text = unwrap_root(edit.value or "{}", edit.encoding)
                top = bulk.parse_document(self.ctx, text, edit.encoding)
            if self.guard.active:
                self._check_root(top)
            old = self.tree.replace(top if top is not None else nodes.ffi.NULL)
            self.undo.add(UndoRecord(UndoKind.ROOT, datapath.ROOT, old))
            self.applied.append(Applied(datapath.ROOT, Access.UPDATE, (datapath.ROOT,)))
            return
        if edit.operation not in (EditOperation.MERGE, EditOperation.CREATE):
            raise refuse("operation-not-supported", f"{edit.operation} of the datastore root")
        text = unwrap_root(edit.value or "{}", edit.encoding)
        top = bulk.parse_document(self.ctx, text, edit.encoding)
        try:
            parts = [
                (nodes.path_of(n), nodes.print_tree(n, Encoding.JSON)) for n in nodes.siblings(top)
            ]
        finally:
            nodes.free_all(top)
        for path, document in parts:
            self.apply(Edit(edit.operation, path, document, Encoding.JSON))


def _under(item: ErrorItem, parent_path: DataPath) -> ErrorItem:
    """An error of a value parsed under a parent, with the path from the datastore root.

    libyang reports such paths from the parsed node down (``/mod:entry[id='2']/weight``).
    """
    if item.path is None or item.path.startswith(parent_path + "/"):
        return item
    first, _, rest = item.path.lstrip("/").partition("/")
    parent_module = next(
        (s.split(":", 1)[0] for s in reversed(datapath.steps(parent_path)) if ":" in s), ""
    )
    if first.startswith(parent_module + ":"):
        first = first[len(parent_module) + 1 :]
    path = "/".join(part for part in (parent_path, first, rest) if part)
    return dataclasses.replace(item, path=path)


def _instances(node: Node) -> list[Node]:
    """The instances of a node's list among its siblings, in order."""
    first = nodes.lib.lyd_first_sibling(node)
    return [sibling for sibling in nodes.siblings(first) if sibling.schema == node.schema]


def _terminal_paths(node: Node) -> list[DataPath]:
    """Paths of the leaves, leaf-lists and empty nodes of a small subtree (what a merge sets)."""
    found: list[DataPath] = []
    stack = [node]
    while stack:
        current = stack.pop()
        kids = list(nodes.children(current))
        if not kids or current.schema.nodetype & (nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST):
            found.append(nodes.path_of(current))
        stack.extend(kids)
    return found


def locate(error: CatsError, applied: list[Applied], tree: Tree | None = None) -> CatsError:
    """Turn libyang's schema locations (a missing mandatory node) into data paths.

    libyang 2.1 names a missing node by its schema path alone (``/m:top/item/name``). With the
    tree as the transaction left it, the instance of the parent that lacks the child gives the
    data path (``/m:top/item[id='2']/name``); else the node the edit changed whose schema path
    leads there does.
    """
    items: list[ErrorItem] = []
    for item in error.items:
        path = item.path
        if path is not None and "[" not in path:
            found = _missing(tree, path, applied) if item.tag == "missing-element" else None
            path = found or _by_record(path, applied)
        items.append(dataclasses.replace(item, path=path))
    return type(error)(*items)


def _by_record(path: str, applied: list[Applied]) -> str:
    for record in applied:
        prefix = datapath.schema_path(record.path)
        if record.path != datapath.ROOT and datapath.is_within(path, prefix):
            return record.path + path[len(prefix) :]
    return path


def _missing(tree: Tree | None, path: str, applied: list[Applied]) -> str | None:
    """The data path of a missing child: the first instance of its parent without it."""
    if tree is None or not tree.first[0]:
        return None
    parts = datapath.steps(path)
    parent_steps, child = parts[:-1], parts[-1]
    parent_shape = "/" + "/".join(parent_steps)  # a schema location, as libyang gave it
    starts: list[tuple[Node, list[str]]] = []
    for record in applied:
        depth = len(datapath.steps(record.path))
        shape = datapath.schema_path(record.path)
        if record.path != datapath.ROOT and datapath.is_within(parent_shape, shape):
            node = tree.find(record.path)
            if node is not None:
                starts.append((node, parent_steps[depth:]))
    if not starts:  # a change at the root: search from the top-level siblings
        name = parent_steps[0].split(":")[-1] if parent_steps else ""
        tops = [n for n in nodes.siblings(tree.first[0]) if n.schema and nodes.name_of(n) == name]
        starts = [(top, parent_steps[1:]) for top in tops]
    child_name = child.split(":")[-1]
    for node, rest in starts:
        for parent in descendants(node, "/".join(rest)) if rest else [node]:
            if all(nodes.name_of(c) != child_name for c in nodes.children(parent)):
                return f"{nodes.path_of(parent)}/{child}"
    return None
