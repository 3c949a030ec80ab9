"""Walks of a data tree under NACM: prune what may not be read, find what may not be written.

A walk visits only where the rules can tell nodes apart (RFC 8341 3.4.5 decided per node):
below a node whose every descendant gets its verdict it stops, and among the instances of one
list it looks at each entry only when a rule names entries by key in a way the others do not
share. When the entries no keyed rule names all get one verdict that needs no look below, the
named entries are found by their keys (libyang's sibling hash) and the rest are not visited at
all: a read of 100k entries with one entry's leaf hidden examines that one entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from controller.datastore.nacm.decide import DataDecider, Level
from controller.datastore.nacm.schema import Step
from controller.model import native, nodes

Node = Any  # struct lyd_node *

#: One instance of a run of siblings, with its level.
Visit = tuple[Node, Level]
#: What a walk does with a node the user may not read: free it (a copy), or hide it.
Drop = Callable[[Node], None]


def free(node: Node) -> None:
    """Drop a node of a scratch tree: free it (``lyd_free_tree`` unlinks it first)."""
    nodes.lib.lyd_free_tree(node)


def _run_end(first: Node) -> Node:
    """The first sibling after the run of instances of ``first``'s schema node (NULL at end)."""
    snode = first.schema
    node = first.next
    while node and node.schema == snode:
        node = node.next
    return node


def _predicate(step: Step) -> str | None:
    """The ``lyd_find_sibling_val`` key of an instance a step names, when its keys name one
    instance exactly (all list keys, or a leaf-list value); None otherwise."""
    if len(step.keys) == 1 and step.keys[0][0] == ".":
        return step.keys[0][1]
    if any(key == "." for key, _ in step.keys):
        return None
    return "".join(f"[{key}={_quoted(value)}]" for key, value in step.keys)


def _quoted(value: str) -> str:
    return f'"{value}"' if "'" in value else f"'{value}'"


def _keys_count(snode: Any) -> int:
    count = 0
    child = nodes.lib.lysc_node_child(snode)
    while child and child.flags & nodes.lib.LYS_KEY:
        count += 1
        child = child.next
    return count


def visits(decider: DataDecider, parent_level: Level, first: Node, depth: int) -> Iterator[Visit]:
    """The siblings from ``first`` (children of a node at ``depth - 1``) that a walk must look
    at, each with its level; a run whose unnamed instances need no look is skipped but for the
    instances keyed rules name."""
    alive = parent_level.alive
    node = first
    while node:
        end = _run_end(node)
        snode = node.schema
        pending = decider.pending(alive, snode, depth)
        if not pending:
            level = decider.keyed_level(snode, alive, depth, frozenset())
            if not (level.verdict.permit and level.uniform):
                run = node
                while run != end:
                    yield run, level
                    run = run.next
            node = end
            continue
        plain = decider.keyed_level(snode, alive, depth, frozenset())
        lookups = [_predicate(step) for _, step in pending]
        exact = all(
            p is not None and (p.startswith("[") is (snode.nodetype == nodes.lib.LYS_LIST))
            for p in lookups
        )
        if exact and snode.nodetype == nodes.lib.LYS_LIST:
            exact = all(len(step.keys) == _keys_count(snode) for _, step in pending)
        if plain.verdict.permit and plain.uniform and exact:
            named = {native.find_entry(node, snode, p or "") for p in lookups}
            for entry in named:
                if entry is not None:
                    yield entry, decider.level(entry, alive, depth)
        else:
            run = node
            while run != end:
                yield run, decider.level(run, alive, depth)
                run = run.next
        node = end


def first_denied(decider: DataDecider, dnode: Node) -> Node | None:
    """The first node of ``dnode``'s subtree (itself included) the access is denied on, or
    None when it may be done on the whole subtree."""
    level, depth = decider.at(dnode)
    return _denied_below(decider, dnode, level, depth)


def _denied_below(decider: DataDecider, dnode: Node, level: Level, depth: int) -> Node | None:
    if not level.verdict.permit:
        return dnode
    if level.uniform:
        return None
    for child, child_level in visits(decider, level, nodes.lib.lyd_child(dnode), depth + 1):
        found = _denied_below(decider, child, child_level, depth + 1)
        if found is not None:
            return found
    return None


def prune(decider: DataDecider, first: Node, drop: Drop = free) -> Node:
    """Free every node of the siblings from ``first`` (top level) the user may not read
    (RFC 8341 3.4.5 step 7: denied data is simply not returned). A list entry whose key may
    not be read goes whole; a denied node above readable ones stays as the way to them.
    Returns the new first sibling (NULL when none is left)."""
    survivor = None
    for node in list(nodes.siblings(first)):
        level = decider.level(node, decider.root, 1)
        if (level.verdict.permit and level.uniform) or _prune_level(decider, node, level, 1, drop):
            survivor = node
    return nodes.lib.lyd_first_sibling(survivor) if survivor is not None else nodes.ffi.NULL


def prune_below(decider: DataDecider, dnode: Node, drop: Drop = free) -> bool:
    """Prune the subtree of a node of a tree whose ancestors are kept; False (after dropping
    it) when nothing of it may be read."""
    level, depth = decider.at(dnode)
    return _prune_level(decider, dnode, level, depth, drop)


def _prune_level(decider: DataDecider, dnode: Node, level: Level, depth: int, drop: Drop) -> bool:
    if not level.verdict.permit:
        if not decider.permits_below(level, depth):
            drop(dnode)
            return False
        return _keep_as_ancestor(decider, dnode, level, depth, drop)
    if level.uniform:
        return True
    for child, child_level in list(visits(decider, level, nodes.lib.lyd_child(dnode), depth + 1)):
        if child.schema.flags & nodes.lib.LYS_KEY:
            if not child_level.verdict.permit:  # an entry whose key is unreadable goes whole
                drop(dnode)
                return False
            continue
        _prune_level(decider, child, child_level, depth + 1, drop)
    return True


def _keep_as_ancestor(
    decider: DataDecider, dnode: Node, level: Level, depth: int, drop: Drop
) -> bool:
    """A node the user may not read, above nodes it may: kept only as the way to them (its
    keys, and the readable descendants), dropped when none is left."""
    kept = False
    for child in list(nodes.children(dnode)):
        if child.schema.flags & nodes.lib.LYS_KEY:
            continue  # an entry is named by its keys
        child_level = decider.level(child, level.alive, depth + 1)
        kept |= _prune_level(decider, child, child_level, depth + 1, drop)
    if not kept:
        drop(dnode)
    return kept
