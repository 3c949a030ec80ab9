"""A datastore tree with a key index of its top-level nodes.

libyang 2.1.30 keeps a sibling hash table in the parent node, so top-level siblings have none:
``lyd_find_path``, ``lyd_merge_tree``, ``lyd_insert_sibling`` and ``lyd_unlink_tree`` of a
top-level list entry scan the siblings (docs/notes/validation-cost.md). :class:`Tree` keeps
(schema node, key values) -> node for every top-level node and finds, links, unlinks and merges
top-level nodes itself in O(1), in libyang's order: the instances of one schema node stay
adjacent and a new one goes at the end of its run (``lyd_insert_get_next_anchor``).

Every change of the top-level siblings of a store goes through a :class:`Tree` method; whatever
libyang may change by itself (a whole-tree validation, a new root) calls :meth:`Tree.invalidate`
and the index is rebuilt at the next lookup.
"""

from __future__ import annotations

from typing import Any

from controller.datastore import datapath
from controller.errors import CatsError
from controller.model import nodes
from controller.model.nodes import Node
from controller.types import DataPath

TopKey = tuple[int, tuple[str, ...]]  # (address of the schema node, canonical key values)
_NULL = nodes.ffi.NULL
_CACHE_LIMIT = 4096


def _addr(pointer: Any) -> int:
    return int(nodes.ffi.cast("uintptr_t", pointer))


def key_of(node: Node) -> TopKey:
    """The index key of a data node: its schema node and its list keys (leaf-list: value)."""
    schema = node.schema
    if schema.nodetype == nodes.lib.LYS_LIST:
        values = []
        child = nodes.lib.lyd_child(node)
        while child and child.schema and child.schema.flags & nodes.lib.LYS_KEY:
            values.append(nodes.value_of(child))
            child = child.next
        return _addr(schema), tuple(values)
    if schema.nodetype == nodes.lib.LYS_LEAFLIST:
        return _addr(schema), (nodes.value_of(node),)
    return _addr(schema), ()


def _is_top_list(node: Node) -> bool:
    schema = node.schema
    return bool(schema and schema.nodetype == nodes.lib.LYS_LIST and not schema.parent)


class Tree:
    """The first top-level sibling in ``first[0]`` and the index of the top-level nodes."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.first = nodes.ffi.new("struct lyd_node **", _NULL)
        self._index: dict[TopKey, Node] = {}
        self._tails: dict[int, Node] = {}  # schema address -> an instance near the run's end
        self._duplicates: set[TopKey] = set()
        self._steps: dict[str, TopKey | None] = {}  # first path step -> key (None: no index)
        self._stale = True

    # ------------------------------------------------------------------ the index

    def invalidate(self) -> None:
        """The top-level siblings changed behind the index: rebuild it when next needed."""
        self._stale = True
        self._index.clear()
        self._tails.clear()
        self._duplicates.clear()

    def _fresh(self) -> None:
        if not self._stale:
            return
        self._stale = False
        node = self.first[0]
        while node:
            if node.schema:
                key = key_of(node)
                if key in self._index:
                    self._duplicates.add(key)
                else:
                    self._index[key] = node
                self._tails[key[0]] = node
            node = node.next

    def replace(self, first: Node) -> Node:
        """Make ``first`` the tree (NULL: empty); returns the old first sibling, not freed."""
        old = self.first[0]
        self.first[0] = first if first is not None else _NULL
        self.invalidate()
        return old

    def before_validation(self) -> None:
        """Spare ``lyd_validate_all`` its duplicate scan of new top-level list entries.

        libyang checks each new (``LYD_NEW``) instance for a duplicate by scanning its siblings,
        O(n) per entry at the top level; the index already knows the duplicates, so only those
        keep the flag (libyang then reports them). Entries in a choice keep it (it picks the
        case).
        """
        self._fresh()
        node = self.first[0]
        while node:
            if node.flags & nodes.lib.LYD_NEW and _is_top_list(node):
                key = key_of(node)
                if key not in self._duplicates and self._index.get(key) == node:
                    node.flags &= ~nodes.lib.LYD_NEW
            node = node.next

    def _step_key(self, step: str) -> TopKey | None:
        """The index key a first path step names (None when the index cannot answer)."""
        if step in self._steps:
            return self._steps[step]
        if len(self._steps) > _CACHE_LIMIT:
            self._steps.clear()
        key: TopKey | None = None
        if "[" not in step:
            snode = nodes.lib.lys_find_path(self.ctx, _NULL, ("/" + step).encode(), 0)
            nodes.lib.ly_err_clean(self.ctx, _NULL)
            if snode and not snode.nodetype & (nodes.lib.LYS_LIST | nodes.lib.LYS_LEAFLIST):
                key = (_addr(snode), ())
        else:
            try:
                made = nodes.new_path(self.ctx, None, "/" + step)
            except CatsError:
                made = _NULL
            if made:
                key = key_of(made)
                nodes.free_all(made)
        self._steps[step] = key
        return key

    def find(self, path: DataPath) -> Node | None:
        """The node at a data path, its top-level step through the index (like
        :func:`nodes.find`: None when absent, ``unknown-element`` for a path not in the
        schema)."""
        parts = datapath.steps(path)
        key = self._step_key(parts[0]) if parts and self.first[0] else None
        if key is None:
            return nodes.find(self.ctx, self.first[0], path)
        self._fresh()
        top = self._index.get(key)
        if top is None:
            nodes.check_schema_path(self.ctx, path)
            return None
        if len(parts) == 1:
            return top
        return nodes.find(self.ctx, top, "/".join(parts[1:]), absolute=path)

    def lookup(self, node: Node) -> Node | None:
        """The top-level node of the tree matching a (detached) node's schema and keys."""
        self._fresh()
        return self._index.get(key_of(node))

    # ------------------------------------------------------------------ linking

    def _tail(self, schema: int) -> Node | None:
        tail = self._tails.get(schema)
        if tail is None:
            return None
        while tail.next and tail.next.schema == tail.schema:
            tail = tail.next
        self._tails[schema] = tail
        return tail

    def _link_after(self, anchor: Node, node: Node) -> None:
        following = anchor.next
        node.next = following
        node.prev = anchor
        node.parent = _NULL
        anchor.next = node
        if following:
            following.prev = node
        else:
            self.first[0].prev = node

    def _link_first(self, node: Node) -> None:
        head = self.first[0]
        node.parent = _NULL
        if head:
            node.next = head
            node.prev = head.prev
            head.prev = node
        else:
            node.next = _NULL
            node.prev = node
        self.first[0] = node

    def _detach(self, node: Node) -> None:
        before, following = node.prev, node.next
        if self.first[0] == node:
            self.first[0] = following if following else _NULL
            if following:
                following.prev = before
        else:
            before.next = following
            if following:
                following.prev = before
            else:
                self.first[0].prev = before
        node.next = _NULL
        node.prev = node

    def insert(self, node: Node) -> None:
        """Link a detached top-level node at the end of its run (libyang's place)."""
        self._fresh()
        key = key_of(node)
        tail = self._tail(key[0])
        if tail is not None:
            self._link_after(tail, node)
        else:  # the first instance of its schema node: libyang finds the place once
            nodes.link(None, self.first, node)
        self._index[key] = node
        self._tails[key[0]] = node

    def _forget(self, node: Node) -> None:
        key = key_of(node)
        if self._index.get(key) == node:
            del self._index[key]
        if self._tails.get(key[0]) == node:
            before, following = node.prev, node.next
            if self.first[0] != node and before.schema == node.schema:
                self._tails[key[0]] = before
            elif following and following.schema == node.schema:
                self._tails[key[0]] = following
            else:
                del self._tails[key[0]]

    def unlink(self, node: Node) -> None:
        """Detach a subtree from the tree (at any depth)."""
        if node.parent:
            nodes.unlink(self.first, node)
            return
        self._fresh()
        self._forget(node)
        self._detach(node)

    def put_back(self, node: Node, before: Node | None) -> None:
        """Link a detached top-level node again just after ``before`` (None: first), where
        :meth:`unlink` took it from."""
        self._fresh()
        if before is None:
            self._link_first(node)
        else:
            self._link_after(before, node)
        key = key_of(node)
        self._index[key] = node
        self._tails.setdefault(key[0], node)

    def free(self, node: Node) -> None:
        """Detach and free a subtree."""
        self.unlink(node)
        nodes.lib.lyd_free_tree(node)

    def link(self, parent: Node | None, node: Node) -> None:
        """Add a detached ``node`` under ``parent`` (None: at the top level)."""
        if parent is not None:
            nodes.link(parent, None, node)
        else:
            self.insert(node)

    def move_before(self, sibling: Node, node: Node) -> None:
        """Put a detached ordered-by user node just before ``sibling``."""
        nodes.move_before(self.first, sibling, node)
        if not node.parent:
            self._fresh()
            key = key_of(node)
            self._index[key] = node
            self._tails.setdefault(key[0], node)

    def move_after(self, sibling: Node, node: Node) -> None:
        """Put a detached ordered-by user node just after ``sibling``."""
        if sibling.parent:
            nodes.move_after(sibling, node)
            return
        self._fresh()
        self._link_after(sibling, node)
        key = key_of(node)
        self._index[key] = node
        if self._tails.get(key[0]) == sibling:
            self._tails[key[0]] = node

    def merge(self, top: Node) -> None:
        """Merge a scratch tree (consumed) into the tree, like ``lyd_merge_tree``.

        A top-level node with a counterpart is merged into that counterpart while it is
        detached (``lyd_merge_tree`` merges only top-level subtrees, and finds the counterpart
        with a scan), then put back where it was.
        """
        self._fresh()
        for node in list(nodes.siblings(top)):
            nodes.native.unlink(node)
            target = self._index.get(key_of(node))
            if target is None:
                self.insert(node)
                continue
            before = None if self.first[0] == target else target.prev
            self._detach(target)
            cell = nodes.ffi.new("struct lyd_node **", target)
            failed = nodes.lib.lyd_merge_tree(cell, node, nodes.lib.LYD_MERGE_DESTRUCT)
            if before is None:
                self._link_first(target)
            else:
                self._link_after(before, target)
            if failed:
                raise nodes.fail(self.ctx)
