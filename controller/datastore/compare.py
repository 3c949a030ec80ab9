"""The difference between two configuration trees, as path-level changes (``cc:compare``).

Two trees are compared node by node from the nodes that may differ: every top-level node for
whole datastores, or only the subtrees a transaction touched when one tree is the other with
some edits applied (a past commit is running with reverse edits applied; a dry run is running
with the candidate's edits applied). Equal subtrees are recognised by their printed JSON, so
the changes are as deep as the difference: a changed leaf is a ``replace`` of the leaf. Entries
of ``ordered-by user`` lists that kept their keys but not their order are ``move`` changes:
those outside a longest run of entries whose order held (RFC 8072 2.5 ``move``).

What a reader may not read (RFC 8341 3.4.5) is pruned from both sides before they are
compared, so a difference it may not see is not reported at all.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from controller.datastore import datapath
from controller.datastore.undo import UndoKind, UndoRecord
from controller.model import nodes
from controller.model.nodes import Node
from controller.model.schema import Encoding
from controller.types import DataPath

#: Prints a node for comparison and output, or None when the reader may not read it.
Printer = Callable[[Node], str | None]


@dataclass(frozen=True, slots=True)
class ChangeItem:
    """One change: ``create``, ``delete``, ``replace`` or ``move`` of the node at ``path``;
    ``old`` and ``new`` are its RFC 7951 JSON before and after, ``where``/``point`` its new
    position in an ordered-by user list (``before`` ``point``, or ``last``)."""

    operation: str
    path: DataPath
    old: str | None = None
    new: str | None = None
    where: str | None = None
    point: DataPath | None = None


def plain_printer(node: Node) -> str | None:
    """Every node, as libyang prints it (explicit nodes only)."""
    return nodes.print_tree(node, Encoding.JSON, nodes.lib.LYD_PRINT_SHRINK)


def _is_terminal(node: Node) -> bool:
    kinds = nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST | nodes.lib.LYS_ANYDATA
    return bool(node.schema.nodetype & kinds) or not nodes.lib.lyd_child(node)


def _by_path(first: Node) -> dict[str, Node]:
    return {nodes.path_of(node): node for node in nodes.siblings(first) if node.schema}


def _increasing_run(values: list[int]) -> set[int]:
    """The values of a longest increasing subsequence (patience sorting)."""
    tails: list[int] = []
    tail_at: list[int] = []
    previous: list[int] = [-1] * len(values)
    for index, value in enumerate(values):
        slot = bisect.bisect_left(tails, value)
        if slot == len(tails):
            tails.append(value)
            tail_at.append(index)
        else:
            tails[slot] = value
            tail_at[slot] = index
        previous[index] = tail_at[slot - 1] if slot else -1
    kept: set[int] = set()
    at = tail_at[-1] if tail_at else -1
    while at >= 0:
        kept.add(values[at])
        at = previous[at]
    return kept


class Comparison:
    """Collects the changes between an old and a new tree, as a reader sees them."""

    def __init__(self, printer: Printer = plain_printer) -> None:
        self._print = printer
        self.items: list[ChangeItem] = []

    def siblings(self, old_first: Node, new_first: Node) -> None:
        """Compare two runs of siblings (children of one parent, or the top level)."""
        old = _by_path(old_first) if old_first else {}
        new = _by_path(new_first) if new_first else {}
        order = list(new) + [path for path in old if path not in new]
        for path in order:
            self.node(DataPath(path), old.get(path), new.get(path), new_order=new, compare_at=False)
        self._moves(old, new)

    def node(
        self,
        path: DataPath,
        old: Node | None,
        new: Node | None,
        *,
        new_order: dict[str, Node] | None = None,
        compare_at: bool = True,
    ) -> None:
        """Compare one node in the two trees (None where it does not exist)."""
        before = _explicit(self._print(old)) if old is not None else None
        after = _explicit(self._print(new)) if new is not None else None
        if before is None and after is None:
            return
        if before is None:
            where, point = _position(new, new_order) if new is not None else (None, None)
            self.items.append(ChangeItem("create", path, None, after, where, point))
        elif after is None:
            self.items.append(ChangeItem("delete", path, before, None))
        elif before != after:
            if old is None or new is None or _is_terminal(old) or _is_terminal(new):
                self.items.append(ChangeItem("replace", path, before, after))
            else:
                self.siblings(nodes.lib.lyd_child(old), nodes.lib.lyd_child(new))
        if compare_at and old is not None and new is not None and nodes.is_user_ordered(new):
            parent_old, parent_new = nodes.parent_of(old), nodes.parent_of(new)
            if parent_old is not None and parent_new is not None:
                self._moves(
                    _by_path(nodes.lib.lyd_child(parent_old)),
                    _by_path(nodes.lib.lyd_child(parent_new)),
                    only=path,
                )

    def _moves(self, old: dict[str, Node], new: dict[str, Node], only: str | None = None) -> None:
        """``move`` changes of the entries of ordered-by user lists that changed order."""
        groups: dict[int, list[str]] = {}
        for path, node in new.items():
            if path in old and nodes.is_user_ordered(node):
                groups.setdefault(int(nodes.ffi.cast("uintptr_t", node.schema)), []).append(path)
        for paths in groups.values():
            old_rank = {path: rank for rank, path in enumerate(p for p in old if p in paths)}
            ranks = [old_rank[path] for path in paths]
            kept = _increasing_run(ranks)
            for path, rank in zip(paths, ranks, strict=True):
                if rank in kept or (only is not None and path != only):
                    continue
                where, point = _position(new[path], new)
                self.items.append(ChangeItem("move", DataPath(path), None, None, where, point))


def _explicit(printed: str | None) -> str | None:
    """A printed node, None when it prints as nothing: a default node libyang added, which the
    configuration does not hold (RFC 6243 ``explicit``)."""
    return None if printed in (None, "{}") else printed


def _position(node: Node, order: dict[str, Node] | None) -> tuple[str | None, DataPath | None]:
    """Where an ordered-by user entry stands: before its next instance, or last."""
    del order
    if not nodes.is_user_ordered(node):
        return None, None
    following = node.next
    while following and following.schema != node.schema:
        following = following.next
    if following and following.schema == node.schema:
        return "before", nodes.path_of(following)
    return "last", None


def touched(records: Iterable[UndoRecord]) -> list[DataPath] | None:
    """The paths a transaction touched, outermost only; None when it replaced the whole
    datastore. An entry of an ordered-by user list stands for its whole list (its parent),
    since its neighbours' order is part of what changed."""
    paths: set[str] = set()
    for record in records:
        if record.kind is UndoKind.ROOT:
            return None
        path = record.path
        if record.before is not None or record.kind is UndoKind.MOVE:
            path = datapath.parent(path)
        paths.add(path)
    outer: list[DataPath] = []
    for found in sorted(paths):
        if found == datapath.ROOT:
            return None
        if not any(datapath.is_within(found, kept) for kept in outer):
            outer.append(DataPath(found))
    return outer
