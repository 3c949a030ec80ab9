"""Render a read: select the target, filter, trim by depth, print (RFC 8040 4.8, RFC 6243).

The target node of a read is printed as itself, the way RFC 8040 4.3 returns a resource
(``{"mod:node": ...}``; a list entry as ``{"mod:list": [{...}]}``). A read of the whole
datastore prints every top-level node (JSON: one object with module-qualified members; XML:
the top-level elements one after another, for the protocol to wrap). Trees with filters are
built from copies (``lyd_dup_single`` with parents), so the datastore is never modified.
"""

from __future__ import annotations

from typing import Any

from controller.datastore import datapath
from controller.datastore.api import ReadRequest, WithDefaults
from controller.model import nodes
from controller.model.fields import expand_fields
from controller.model.nodes import Node
from controller.model.schema import Encoding
from controller.types import DataPath

_WD_FLAGS = {
    None: nodes.lib.LYD_PRINT_WD_EXPLICIT,  # the server's basic mode (RFC 6243 2.3)
    WithDefaults.EXPLICIT: nodes.lib.LYD_PRINT_WD_EXPLICIT,
    WithDefaults.REPORT_ALL: nodes.lib.LYD_PRINT_WD_ALL,
    WithDefaults.REPORT_ALL_TAGGED: nodes.lib.LYD_PRINT_WD_ALL_TAG,
    WithDefaults.TRIM: nodes.lib.LYD_PRINT_WD_TRIM,
}


def print_flags(request: ReadRequest, *, siblings: bool = False) -> int:
    """libyang printer flags of a read."""
    flags = int(_WD_FLAGS[request.with_defaults]) | int(nodes.lib.LYD_PRINT_SHRINK)
    return flags | (int(nodes.lib.LYD_PRINT_WITHSIBLINGS) if siblings else 0)


def empty(encoding: Encoding) -> str:
    """The document of an empty datastore."""
    return "{}" if encoding is Encoding.JSON else ""


def needs_copy(request: ReadRequest) -> bool:
    """Whether the read prunes or annotates, so it must work on a copy."""
    return bool(request.fields or request.xpath_filter or request.depth or request.with_origin)


def print_target(ctx: Any, first: Node, request: ReadRequest) -> str | None:
    """Print the target of a read from a tree without copying it."""
    if request.path is None:
        if not first:
            return empty(request.encoding)
        return nodes.print_tree(first, request.encoding, print_flags(request, siblings=True))
    target = nodes.find(ctx, first, request.path)
    if target is None:
        return None
    return nodes.print_tree(target, request.encoding, print_flags(request))


def render(ctx: Any, first: Node, request: ReadRequest) -> str | None:
    """Print a read from a tree: directly, or through a copy when it prunes or annotates."""
    if needs_copy(request):
        return render_copy(ctx, first, request)
    return print_target(ctx, first, request)


def select(ctx: Any, first: Node, xpath: str) -> Node:
    """A new tree holding the nodes an XPath selects, with their ancestors and list keys.

    ``/`` selects the root node, which is everything (XPath 1.0 2.2); libyang's node set
    holds no root node, so it is read as every top-level node (``/*``).
    """
    result = nodes.ffi.new("struct lyd_node **", nodes.ffi.NULL)
    if xpath.strip() == "/":
        xpath = "/*"
    for node in nodes.find_all(ctx, first, xpath):
        copy = nodes.dup(node, with_parents=True)
        if nodes.lib.lyd_merge_tree(result, nodes.top_of(copy), nodes.lib.LYD_MERGE_DESTRUCT):
            raise nodes.fail(ctx)
    return result[0]


def fields_xpath(target: DataPath | None, fields: str) -> str:
    """RFC 8040 4.8.3 ``fields`` as an XPath union relative to the target."""
    base = "" if target is None else target
    return " | ".join(f"{base}/{path}" for path in expand_fields(fields))


def address(node: Node) -> int:
    """A node's identity (cffi wraps the same C pointer in new Python objects)."""
    return int(nodes.ffi.cast("uintptr_t", node))


def trim_depth(node: Node, depth: int, levelled: frozenset[int] = frozenset()) -> None:
    """Free what lies deeper than ``depth`` below ``node`` (depth 1: the node alone).

    RFC 8040 4.8.2: the node itself is level 1 and the nodes up to level ``depth`` are
    returned; a node whose :func:`address` is in ``levelled`` (a node ``fields`` selects, or one
    of its ancestors) is level 1 again wherever it is. A container at the last level stays,
    empty: libyang would call a non-presence container emptied here a default node and not
    print it, so it keeps the default flag it had. List keys stay with their entry (a list
    entry and its keys are one level).
    """
    _cut(node, 1, depth, levelled)


def _cut(node: Node, level: int, depth: int, levelled: frozenset[int]) -> None:
    was_default = node.flags & nodes.lib.LYD_DEFAULT
    for child in list(nodes.children(node)):
        if address(child) in levelled:
            _cut(child, 1, depth, levelled)
        elif child.schema.flags & nodes.lib.LYS_KEY:
            continue
        elif level >= depth:
            nodes.lib.lyd_free_tree(child)
        else:
            _cut(child, level + 1, depth, levelled)
    if not was_default:
        node.flags &= ~nodes.lib.LYD_DEFAULT


def render_copy(ctx: Any, first: Node, request: ReadRequest) -> str | None:
    """Print a read that filters, from ``first`` (a tree the caller may free afterwards)."""
    tree = first
    owned: list[Node] = []
    try:
        if request.xpath_filter:
            tree = select(ctx, tree, request.xpath_filter)
            owned.append(tree)
        if request.fields:
            if request.path is not None and nodes.find(ctx, tree, request.path) is None:
                return None
            selection = fields_xpath(request.path, request.fields)
            tree = select(ctx, tree, selection)
            owned.append(tree)
            if request.depth:
                _depth_of_fields(ctx, tree, selection, request.depth)
            if request.path is not None and nodes.find(ctx, tree, request.path) is None:
                tree = nodes.new_path(ctx, tree or None, request.path)
                owned.append(tree)
        elif request.depth:
            tree = _depth_copy(ctx, tree, request)
            owned.append(tree)
        return print_target(ctx, tree, request)
    finally:
        for node in owned:
            nodes.free_all(node)


def _depth_of_fields(ctx: Any, tree: Node, selection: str, depth: int) -> None:
    """RFC 8040 4.8.2 with ``fields``: the selected nodes and their ancestors are level 1."""
    levelled: set[int] = set()
    for selected in nodes.find_all(ctx, tree, selection):
        node = selected
        while node:
            levelled.add(address(node))
            node = nodes.parent_of(node)
    frozen = frozenset(levelled)
    for top in list(nodes.siblings(tree)):
        trim_depth(top, depth, frozen)


def _depth_copy(ctx: Any, tree: Node, request: ReadRequest) -> Node:
    """A copy of the read's target cut at ``request.depth`` (RFC 8040 4.8.2).

    The target is level 1; for a read of the whole datastore the datastore itself is level 1
    (``ietf-restconf:data``), so its top-level nodes are level 2 and ``depth=1`` returns none.
    """
    depth = request.depth or 1
    if request.path is None:
        copy = nodes.ffi.new("struct lyd_node **")
        if depth == 1:
            return copy[0]
        if tree and nodes.lib.lyd_dup_siblings(
            tree, nodes.ffi.NULL, nodes.lib.LYD_DUP_RECURSIVE | nodes.lib.LYD_DUP_WITH_FLAGS, copy
        ):
            raise nodes.fail(ctx)
        for top in list(nodes.siblings(copy[0])):
            trim_depth(top, depth - 1)
        return copy[0]
    target = nodes.find(ctx, tree, request.path)
    if target is None:
        return nodes.ffi.NULL
    copy = nodes.dup(target, with_parents=True)
    trim_depth(copy, depth)
    return nodes.top_of(copy)


def within(path: DataPath | None, region: DataPath) -> bool:
    """Whether a read of ``path`` and a subtree at ``region`` overlap."""
    if path is None:
        return True
    return datapath.is_within(path, region) or datapath.is_within(region, path)
