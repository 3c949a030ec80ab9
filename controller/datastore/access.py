"""Access checks of a transaction and of a read, per data node (RFC 8341 3.4.5).

A write needs ``create``, ``update`` or ``delete`` access to every node it creates, changes or
deletes, and a read silently leaves out the nodes the principal may not read. The changed
nodes are found by comparing the edit's own subtree with the matching nodes of the datastore
(``lyd_find_sibling_first``: hash lookups), so the cost follows the edit, never the datastore;
a created or deleted subtree is handed to NACM whole, which descends only where its rules can
tell the nodes apart (:mod:`controller.datastore.nacm.decide`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from controller.datastore.api import Access
from controller.datastore.errors import refuse
from controller.datastore.nacm import Op, UserAccess, walk
from controller.errors import ErrorType
from controller.model import nodes
from controller.model.nodes import Node

_TERMINAL = nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST
_OPS = {
    Access.CREATE: Op.CREATE,
    Access.UPDATE: Op.UPDATE,
    Access.DELETE: Op.DELETE,
    Access.READ: Op.READ,
    Access.EXEC: Op.EXEC,
}

#: One change an edit makes: the access, the node, and whether it stands for its subtree.
Change = tuple[Access, Node, bool]


def _is_default(node: Node) -> bool:
    return bool(node.flags & nodes.lib.LYD_DEFAULT)


class Guard:
    """Asks NACM about the nodes a transaction changes; ``access-denied`` on the first one
    refused (RFC 8341 3.4.5), after counting the denial once (``denied-data-writes``).

    With ``user`` None (the server's own work, a recovery session, NACM off) every check
    passes at no cost.
    """

    def __init__(
        self, user: UserAccess | None, name: str, on_denied: Callable[[], None] = lambda: None
    ) -> None:
        self.user = user
        self._name = name
        self._on_denied = on_denied

    @property
    def active(self) -> bool:
        """Whether any check can fail."""
        return self.user is not None

    def node(self, access: Access, node: Node) -> None:
        """Check one node."""
        if self.user is not None and not self.user.data(_OPS[access]).verdict(node).permit:
            self._deny(access, node)

    def subtree(self, access: Access, node: Node) -> None:
        """Check a node and all its descendants (a created or deleted subtree)."""
        if self.user is None:
            return
        denied = walk.first_denied(self.user.data(_OPS[access]), node)
        if denied is not None:
            self._deny(access, denied)

    def changes(self, found: Iterator[Change]) -> None:
        """Check every change :func:`changes` found."""
        if self.user is None:
            return
        for access, node, whole in found:
            if whole:
                self.subtree(access, node)
            else:
                self.node(access, node)

    def _deny(self, access: Access, node: Node) -> None:
        self._on_denied()
        path = nodes.path_of(node)
        raise refuse(
            "access-denied",
            f"{self._name} may not {access} {path} (access control, RFC 8341)",
            path,
            error_type=ErrorType.APPLICATION,
        )


def changes(new: Node | None, old: Node | None, *, replace: bool) -> Iterator[Change]:
    """The nodes an edit creates, updates or deletes (``replace``: the old subtree goes).

    ``new`` is the edit's value (parsed, not linked into the datastore), ``old`` the datastore
    node it lands on (None: nothing there). Deleted nodes are reported from the old side; a
    created or deleted subtree is one change that stands for all its nodes.
    """
    if new is None:
        if old is not None and not _is_default(old):
            yield Access.DELETE, old, True
        return
    if old is None or (_is_default(old) and not list(nodes.children(old))):
        yield Access.CREATE, new, True
        return
    if new.schema.nodetype & _TERMINAL:
        if nodes.value_of(new) != nodes.value_of(old):
            yield Access.UPDATE, new, False
        return
    yield from sibling_changes(nodes.lib.lyd_child(new), old, replace=replace)


def sibling_changes(
    first_new: Node, old_parent: Node | None, *, replace: bool, old_first: Node = None
) -> Iterator[Change]:
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


def readable(user: UserAccess, node: Node) -> bool:
    """Whether a node of a tree may be read (its ancestors decide too)."""
    return bool(user.data(Op.READ).verdict(node).permit)
