"""Hide nodes of a live datastore tree for one read, and put them back (RFC 8341 3.4.5).

A read by a user NACM restricts must not show what the user may not read. Copying the
datastore to prune the copy costs as much as the read itself twice over at 100k entries (a
copy and a free of the whole tree); instead the few nodes the walk finds are unlinked from the
live tree, the read is printed, and they are linked again where they were, all under the
core's lock, so no other request sees the tree in between. Each node goes back where it was,
but for an instance of an ``ordered-by system`` list below the top level: libyang links it at
the end of its list (RFC 7950 7.7.7 leaves that order to the server), as it would a new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import Any

from controller.datastore.tree import Tree
from controller.model import native, nodes

Node = Any  # struct lyd_node *


@dataclass(frozen=True, slots=True)
class _Place:
    node: Node
    parent: Node  # None at the top level
    anchor: Node  # top level: the sibling before (None: first); below: the next instance


class Hider:
    """Nodes hidden from a tree until the ``with`` block ends."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree
        self._places: list[_Place] = []

    def hide(self, node: Node) -> None:
        """Unlink ``node`` (and its subtree) until the block ends."""
        if node.parent:
            parent = nodes.ffi.cast("struct lyd_node *", node.parent)
            following = node.next
            same = bool(following) and following.schema == node.schema
            anchor = following if same and nodes.is_user_ordered(node) else None
            self._places.append(_Place(node, parent, anchor))
        else:
            before = None if self._tree.first[0] == node else node.prev
            self._places.append(_Place(node, None, before))
        self._tree.unlink(node)

    def restore(self) -> None:
        """Link every hidden node again, the last hidden first (so each anchor is there)."""
        while self._places:
            place = self._places.pop()
            if place.parent is None:
                self._tree.put_back(place.node, place.anchor)
            elif place.anchor is not None:
                if native.insert_before(place.anchor, place.node) != nodes.lib.LY_SUCCESS:
                    nodes.link(place.parent, None, place.node)
            else:
                nodes.link(place.parent, None, place.node)

    def __enter__(self) -> Hider:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.restore()
