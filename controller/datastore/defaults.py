"""Default nodes of an unvalidated tree kept current as it is edited (RFC 6243 2, RFC 7950 7.9).

The candidate is edited without validation (RFC 6241 8.3.1), and libyang adds, replaces and
drops default nodes only when it validates. So after an edit the candidate would still show
the defaults of what was there before: the default case of a choice next to a newly
configured leaf of another case, and no defaults under a newly created presence container.
:func:`refresh` puts each edited node's defaults right, and where the edited node is in a
case, those of its parent (whose choice may have changed case).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from controller.datastore import datapath
from controller.datastore.transaction import Applied, is_default
from controller.datastore.tree import Tree
from controller.model import nodes
from controller.model.nodes import Node
from controller.types import DataPath

_IN_CHOICE = nodes.lib.LYS_CASE | nodes.lib.LYS_CHOICE


def refresh(ctx: Any, tree: Tree, applied: Sequence[Applied]) -> None:
    """Recompute the default nodes around every node an edit changed."""
    done: set[DataPath] = set()
    for record in applied:
        if record.path == datapath.ROOT:
            _whole(ctx, tree)
            return
        around = [record.path]
        parent = datapath.parent(record.path)
        if parent != datapath.ROOT and _in_case(ctx, record.path):
            around.append(parent)
        for path in around:
            if path in done:
                continue
            done.add(path)
            node = tree.find(path)
            if node is not None:
                _reset(ctx, node)


def _in_case(ctx: Any, path: DataPath) -> bool:
    """Whether the schema node of a data path is in a case of a choice."""
    snode = nodes.lib.lys_find_path(ctx, nodes.ffi.NULL, datapath.schema_path(path).encode(), 0)
    nodes.lib.ly_err_clean(ctx, nodes.ffi.NULL)
    return bool(snode and snode.parent and snode.parent.nodetype & _IN_CHOICE)


def _drop(node: Node) -> None:
    """Free every default-only node below ``node``."""
    for child in list(nodes.children(node)):
        if is_default(child):
            nodes.native.unlink(child)
            nodes.lib.lyd_free_tree(child)
        elif nodes.lib.lyd_child(child):
            _drop(child)


def _reset(ctx: Any, node: Node) -> None:
    """The defaults below ``node`` as validation would leave them; a container that now holds
    explicit nodes (it or an ancestor) is no longer a default node itself."""
    _drop(node)
    if nodes.native.add_implicit(node) != nodes.lib.LY_SUCCESS:
        raise nodes.fail(ctx)
    current: Node | None = node
    while current is not None and not is_default(current):
        current.flags &= ~nodes.lib.LYD_DEFAULT
        current = nodes.parent_of(current)


def _whole(ctx: Any, tree: Tree) -> None:
    """The whole datastore was replaced: add every default it lacks (``lyd_new_implicit_all``)."""
    if not tree.first[0]:
        return
    flags = nodes.lib.LYD_IMPLICIT_NO_STATE
    if nodes.lib.lyd_new_implicit_all(tree.first, ctx, flags, nodes.ffi.NULL):
        raise nodes.fail(ctx)
    tree.invalidate()
