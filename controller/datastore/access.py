"""Access checks per node: what an edit creates, changes or deletes, and what a read may show.

NACM (RFC 8341 3.4.5, 3.4.6) decides per data node: a write needs ``create``, ``update`` or
``delete`` access to every node it creates, changes or deletes, and a read silently leaves out
the nodes the principal may not read. The changed nodes are found by comparing the edit's own
subtree with the matching nodes of the datastore (``lyd_find_sibling_first``: hash lookups), so
the cost follows the edit, never the datastore. The core skips all of this when the check is
the default permit-all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from controller.datastore.api import Access
from controller.model import nodes
from controller.model.nodes import Node
from controller.types import DataPath

#: Whether the request's principal may do an access on the node at a data path.
Allowed = Callable[[Access, DataPath], bool]

_TERMINAL = nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST


def subtree(node: Node) -> Iterator[Node]:
    """A node and all its descendants, parents first."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(nodes.children(current))))


def _is_default(node: Node) -> bool:
    return bool(node.flags & nodes.lib.LYD_DEFAULT)


def changes(new: Node | None, old: Node | None, *, replace: bool) -> Iterator[tuple[Access, Node]]:
    """The nodes an edit creates, updates or deletes (``replace``: the old subtree goes).

    ``new`` is the edit's value (parsed, not linked into the datastore), ``old`` the datastore
    node it lands on (None: nothing there). Deleted nodes are reported from the old side.
    """
    if new is None:
        if old is not None:
            yield from ((Access.DELETE, n) for n in subtree(old) if not _is_default(n))
        return
    if old is None or (_is_default(old) and not list(nodes.children(old))):
        yield from ((Access.CREATE, n) for n in subtree(new))
        return
    if new.schema.nodetype & _TERMINAL:
        if nodes.value_of(new) != nodes.value_of(old):
            yield Access.UPDATE, new
        return
    yield from sibling_changes(nodes.lib.lyd_child(new), old, replace=replace)


def sibling_changes(
    first_new: Node, old_parent: Node | None, *, replace: bool, old_first: Node = None
) -> Iterator[tuple[Access, Node]]:
    """:func:`changes` of the children of a node (or of top-level siblings via ``old_first``)."""
    old_children = nodes.lib.lyd_child(old_parent) if old_parent is not None else old_first
    seen: set[int] = set()
    for child in nodes.siblings(first_new):
        match = nodes.native.counterpart(old_children, child) if old_children else None
        if match is not None:
            seen.add(nodes.native.address(match) or 0)
        yield from changes(child, match, replace=replace)
    if replace and old_children:
        for gone in nodes.siblings(old_children):
            if (nodes.native.address(gone) or 0) not in seen:
                yield from changes(None, gone, replace=replace)


def check_changes(
    found: Iterator[tuple[Access, Node]], guard: Callable[[Access, DataPath], None]
) -> None:
    """Ask the guard about every changed node (it raises ``access-denied``)."""
    for access, node in found:
        guard(access, nodes.path_of(node))


def filter_read(first: Node, allowed: Allowed) -> Node:
    """Free, in a scratch tree, every node the principal may not read (RFC 8341 3.4.5).

    A list entry whose key may not be read goes as a whole. Returns the new first sibling.
    """
    keep: list[Node] = []
    for top in list(nodes.siblings(first)):
        if _prune(top, allowed):
            keep.append(top)
    return keep[0] if keep else nodes.ffi.NULL


def _prune(node: Node, allowed: Allowed) -> bool:
    """Prune below ``node``; False (after freeing it) when ``node`` itself may not be read."""
    if not allowed(Access.READ, nodes.path_of(node)):
        nodes.lib.lyd_free_tree(node)
        return False
    return prune_children(node, allowed)


def prune_children(node: Node, allowed: Allowed) -> bool:
    """Free the unreadable nodes below ``node``; False (after freeing it) when one of its list
    keys is unreadable, so the whole entry goes."""
    for child in list(nodes.children(node)):
        is_key = bool(child.schema.flags & nodes.lib.LYS_KEY)
        if not _prune(child, allowed) and is_key:
            nodes.lib.lyd_free_tree(node)
            return False
    return True


def filtered_copy(ctx: Any, first: Node, path: DataPath | None, readable: Allowed) -> Node:
    """A copy of what a read covers, without the nodes the principal may not read (the
    target itself was checked by the caller)."""
    if path is None:
        copy = nodes.ffi.new("struct lyd_node **", nodes.ffi.NULL)
        flags = nodes.lib.LYD_DUP_RECURSIVE | nodes.lib.LYD_DUP_WITH_FLAGS
        if first and nodes.lib.lyd_dup_siblings(first, nodes.ffi.NULL, flags, copy):
            raise nodes.fail(ctx)
        return filter_read(copy[0], readable) if copy[0] else copy[0]
    target = nodes.find(ctx, first, path)
    if target is None:
        return nodes.ffi.NULL
    copy = nodes.dup(target, with_parents=True)
    top = nodes.top_of(copy)
    if not prune_children(copy, readable) and top == copy:
        return nodes.ffi.NULL  # the target itself went with an unreadable key
    return top
