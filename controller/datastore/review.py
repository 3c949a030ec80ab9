"""Reviewing configurations without changing them: trials of edits on running and comparisons.

A *trial* applies edits to running in place, under the core's lock, copies what they touched,
and undoes them (the same undo log as any failed transaction): a dry-run commit or rollback
(validated and access-checked as the requester, RFC 8341 3.4.5) and the comparison of running
with a past commit (running with the reverse edits of the later commits applied) cost
O(change), not O(datastore). Comparisons that involve startup, an edited candidate that is not
a replay of its edits, or two past commits compare whole trees (:mod:`.compare`), and a past
commit is then rebuilt as a copy of running with reverse edits applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from controller.datastore import datapath
from controller.datastore.access import Guard
from controller.datastore.api import DatastoreName, Edit
from controller.datastore.compare import ChangeItem, Comparison, Printer, plain_printer, touched
from controller.datastore.nacm import Op, UserAccess, walk
from controller.datastore.stores import ConfigStore
from controller.datastore.transaction import Applier, locate
from controller.datastore.validation import Validator
from controller.errors import CatsError
from controller.model import nodes
from controller.model.nodes import Node
from controller.model.schema import Encoding
from controller.types import DataPath

#: A server's own look at the data, past every access check.
UNGUARDED = Guard(None, "review")


def reader_printer(user: UserAccess | None) -> Printer:
    """Prints a node as ``user`` may read it (RFC 8341 3.4.5), None when it may not at all."""
    if user is None:
        return plain_printer
    reader = user.data(Op.READ)

    def printed(node: Node) -> str | None:
        copy = nodes.dup(node, with_parents=True)
        top = nodes.top_of(copy)
        alone = top == copy
        if not walk.prune_below(reader, copy):  # it freed the copy
            if not alone:
                nodes.free_all(top)
            return None
        try:
            return nodes.print_tree(copy, Encoding.JSON, nodes.lib.LYD_PRINT_SHRINK)
        finally:
            nodes.free_all(top)

    return printed


def _copies(store: ConfigStore, paths: list[DataPath] | None) -> dict[DataPath, Node]:
    """Copies of the nodes at ``paths`` (of the whole tree when None, under the root path)."""
    if paths is None:
        return {datapath.ROOT: store.copy_tree()}
    found: dict[DataPath, Node] = {}
    for path in paths:
        node = store.tree.find(path)
        if node is not None:
            found[path] = nodes.dup(node, with_parents=True)
    return found


def _target(copy: Node, path: DataPath, ctx: Any) -> Node:
    return nodes.find(ctx, nodes.top_of(copy), path) if copy else None


def trial(  # noqa: PLR0913 - a trial's inputs, each needed
    store: ConfigStore,
    edits: Sequence[Edit],
    guard: Guard,
    validator: Validator | None,
    printer: Printer,
    *,
    forward: bool = True,
) -> list[ChangeItem]:
    """Apply ``edits`` to running's ``store``, compare, undo: the changes running -> edited
    (``forward``) or edited -> running. The caller holds the core's lock. ``validator``
    validates the edited tree (a CatsError then says what is wrong); None skips validation."""
    ctx = store.ctx
    applier = Applier(ctx, store.tree, guard)
    checked = False
    try:
        for edit in edits:
            applier.apply(edit)
        if validator is not None:
            checked = True
            validator.check(store, applier.applied)
        paths = touched(applier.undo.records)
        copies = _copies(store, paths)
    except CatsError as exc:
        located = locate(exc, applier.applied, store.tree)
        _undo(applier, validator if checked else None)
        raise located from exc
    except BaseException:
        _undo(applier, validator if checked else None)
        raise
    _undo(applier, validator if checked else None)
    try:
        return _compare_copies(store, copies, paths, printer, forward=forward)
    finally:
        for copy in copies.values():
            nodes.free_all(nodes.top_of(copy) if copy else copy)


def _undo(applier: Applier, validator: Validator | None) -> None:
    applier.undo.rollback()
    if validator is not None:
        validator.settle(committed=False)


def _compare_copies(
    store: ConfigStore,
    copies: dict[DataPath, Node],
    paths: list[DataPath] | None,
    printer: Printer,
    *,
    forward: bool,
) -> list[ChangeItem]:
    comparison = Comparison(printer)
    if paths is None:
        edited = copies.get(datapath.ROOT)
        old, new = (store.first[0], edited) if forward else (edited, store.first[0])
        comparison.siblings(old, new)
        return comparison.items
    for path in paths:
        live = store.tree.find(path)
        copy = copies.get(path)
        edited = _target(copy, path, store.ctx) if copy is not None else None
        old, new = (live, edited) if forward else (edited, live)
        comparison.node(path, old, new)
    return comparison.items


def compare_trees(old: ConfigStore, new: ConfigStore, printer: Printer) -> list[ChangeItem]:
    """The changes from one whole tree to another."""
    comparison = Comparison(printer)
    comparison.siblings(old.first[0], new.first[0])
    return comparison.items


def rebuilt(running: ConfigStore, edits: Sequence[Edit]) -> ConfigStore:
    """A copy of running with ``edits`` applied (a past commit, from reverse edits); the
    caller closes it."""
    copy = ConfigStore(running.ctx, DatastoreName.RUNNING, None)
    copy.replace_tree(running.copy_tree())
    applier = Applier(copy.ctx, copy.tree, UNGUARDED)
    try:
        for edit in edits:
            applier.apply(edit)
    except BaseException:
        copy.close()
        raise
    applier.undo.commit()
    return copy
