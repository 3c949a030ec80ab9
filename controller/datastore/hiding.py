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


def _address(pointer: Any) -> int:
    return int(nodes.ffi.cast("uintptr_t", pointer))


class Selection:
    """Hide what selection nodes of a subtree filter do not select (RFC 6241 6.2.4): the
    instances at the selected schema paths stay whole, with their ancestors; everything else
    is hidden, an ancestor too when nothing is left in it. Instances of a selected node are
    never visited (100k selected list entries cost a hash look-up), only those hidden.

    ``defaults``: whether default nodes are printed (report-all); when they are not, a
    container whose only selected nodes are defaults is hidden, as a whole read would show
    nothing of them to select.
    """

    def __init__(self, ctx: Any, paths: tuple[str, ...], *, defaults: bool) -> None:
        self._ctx = ctx
        self._defaults = defaults
        self._targets: set[int] = set()
        self._ancestors: set[int] = set()
        for path in paths:
            found = nodes.lib.lys_find_path(ctx, nodes.ffi.NULL, path.encode(), 0)
            if found == nodes.ffi.NULL:
                continue  # no such node: it selects nothing
            self._targets.add(_address(found))
            parent = found.parent
            while parent:
                self._ancestors.add(_address(parent))
                parent = parent.parent

    def apply(self, tree: Tree, hider: Hider) -> None:
        """Hide from ``tree`` (until ``hider`` restores it) what is not selected."""
        for top in reversed(list(nodes.siblings(tree.first[0]))):
            if not self._keep(top, hider):
                hider.hide(top)

    def _shown(self, node: Node) -> bool:
        return self._defaults or not node.flags & nodes.lib.LYD_DEFAULT

    def _keep(self, node: Node, hider: Hider) -> bool:
        """Whether anything selected is left of ``node`` (its unselected children hidden)."""
        schema = _address(node.schema)
        if schema in self._targets:
            return bool(self._shown(node))
        if schema not in self._ancestors or node.schema.nodetype != nodes.lib.LYS_CONTAINER:
            return False
        kept = False
        first = nodes.lib.lyd_child(node)
        child_schema = nodes.lib.lys_getnext(nodes.ffi.NULL, node.schema, nodes.ffi.NULL, 0)
        while child_schema != nodes.ffi.NULL and first:
            run = self._run(first, child_schema)
            if run:
                address = _address(child_schema)
                if address in self._targets and child_schema.nodetype == nodes.lib.LYS_LIST:
                    kept = True  # an entry is never a default node: the run is not walked
                elif address in self._targets or address in self._ancestors:
                    for instance in reversed(self._instances(run, child_schema)):
                        if self._keep(instance, hider):
                            kept = True
                        else:
                            hider.hide(instance)
                else:  # the last first: put back first first, each at the end of its run
                    for instance in reversed(self._instances(run, child_schema)):
                        hider.hide(instance)
                first = nodes.lib.lyd_child(node)
            child_schema = nodes.lib.lys_getnext(child_schema, node.schema, nodes.ffi.NULL, 0)
        return kept

    @staticmethod
    def _run(first: Node, schema: Any) -> Node:
        """The first instance of ``schema`` among ``first``'s siblings (a hash look-up)."""
        return native.first_instance(first, schema)

    @staticmethod
    def _instances(start: Node, schema: Any) -> list[Node]:
        found = []
        node = start
        while node and node.schema == schema:
            found.append(node)
            node = node.next
        return found
