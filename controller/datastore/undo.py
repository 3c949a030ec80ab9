"""The undo log of a transaction: edits are applied in place and undone on any failure.

Each record says how to put back what one step changed, by data path (node pointers do not
survive the undoing of later steps). Copies are ``lyd_dup_single`` of one entry (about 1 us),
never of the whole tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from controller.datastore import datapath
from controller.datastore.tree import Tree
from controller.model import nodes
from controller.model.nodes import Node
from controller.types import DataPath


class UndoKind(Enum):
    """What a record undoes."""

    REMOVE = "remove"  # a node was created: free it
    RESTORE = "restore"  # a node was changed or deleted: put its copy back
    ROOT = "root"  # the whole datastore was replaced: put the old tree back
    MOVE = "move"  # an ordered-by user entry moved: move it back


@dataclass
class UndoRecord:
    """One step to undo (``saved`` is owned by the log until commit or rollback)."""

    kind: UndoKind
    path: DataPath
    saved: Node = None
    before: DataPath | None = None  # the next instance of the same list, where it was


class UndoLog:
    """Records in application order; :meth:`rollback` replays them backwards."""

    def __init__(self, ctx: Any, tree: Tree) -> None:
        self._ctx = ctx
        self._tree = tree
        self.records: list[UndoRecord] = []

    def add(self, record: UndoRecord) -> None:
        """Append a record."""
        self.records.append(record)

    def rollback(self) -> None:
        """Undo every step, newest first; the tree is then as it was before the first."""
        for record in reversed(self.records):
            self._undo(record)
        self.records.clear()

    def commit(self) -> None:
        """Forget the records and free the copies they kept."""
        for record in self.records:
            if record.kind in (UndoKind.RESTORE, UndoKind.ROOT):
                nodes.free_all(record.saved)
        self.records.clear()

    def _find(self, path: DataPath) -> Node | None:
        return self._tree.find(path)

    def _undo(self, record: UndoRecord) -> None:
        if record.kind is UndoKind.ROOT:
            nodes.free_all(self._tree.replace(record.saved))
            return
        current = self._find(record.path)
        if record.kind is UndoKind.REMOVE:
            if current is not None:
                self._tree.free(current)
            return
        if record.kind is UndoKind.RESTORE:
            if current is not None and _restore_in_place(current, record.saved, record.before):
                return
            if current is not None:
                self._tree.free(current)
            self._place(record.saved, record.path, record.before)
            return
        if current is not None:  # MOVE
            self._tree.unlink(current)
            self._place(current, record.path, record.before)

    def _place(self, node: Node, path: DataPath, before: DataPath | None) -> None:
        """Link a detached node back under its parent, before ``before`` when that exists.

        libyang inserts only ordered-by user entries at a position; an ordered-by system
        entry is appended after its list's instances, so the instances from ``before`` on are
        taken out and appended again after it (the list's order is then as it was: an undone
        transaction leaves no trace, and replicas that undo and replicas that never applied
        agree, RFC 7950 7.7.7 leaving the order to the server but not to chance).
        """
        neighbour = self._find(before) if before is not None else None
        if neighbour is not None and nodes.is_user_ordered(node):
            self._tree.move_before(neighbour, node)
            return
        parent_path = datapath.parent(path)
        parent = None if parent_path == datapath.ROOT else self._find(parent_path)
        following = self._instances_from(neighbour) if neighbour is not None else []
        for instance in following:
            self._tree.unlink(instance)
        self._tree.link(parent, node)
        for instance in following:
            self._tree.link(parent, instance)

    @staticmethod
    def _instances_from(node: Node) -> list[Node]:
        """``node`` and the instances of its list (or leaf-list) that follow it."""
        found = [node]
        following = node.next
        while following and following.schema == node.schema:
            found.append(following)
            following = following.next
        return found


def _restore_in_place(current: Node, saved: Node, before: DataPath | None) -> bool:
    """Put a changed ordered-by system list entry that is where it was (just before
    ``before``) back as ``saved`` without moving it: its children other than the keys (the
    same in both) are swapped for the copy's, and the copy is freed. Taking the entry out
    would mean taking out every instance after it to keep the list's order
    (:meth:`UndoLog._place`): seconds at 100k entries, where this costs the entry's children.
    False (nothing done) for any other node, one with metadata or one in a case, or an entry
    the transaction put elsewhere (a replaced one is appended)."""
    if not nodes.in_place(current, saved) or next_instance_path(current) != before:
        return False
    nodes.take_content(current, saved)
    return True


def next_sibling_path(node: Node) -> DataPath | None:
    """The path of the next instance of the same ordered-by user list, if any."""
    if not nodes.is_user_ordered(node):
        return None
    return next_instance_path(node)


def next_instance_path(node: Node) -> DataPath | None:
    """The path of the next instance of the same list or leaf-list (any order), if any: where
    an undone change puts the entry back."""
    following = node.next
    if following and following.schema == node.schema:  # only list instances repeat
        return nodes.path_of(following)
    return None
