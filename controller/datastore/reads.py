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
from controller.datastore.errors import refuse
from controller.model import nodes
from controller.model.nodes import Node
from controller.model.schema import Encoding

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


def select(ctx: Any, first: Node, xpath: str) -> Node:
    """A new tree holding the nodes an XPath selects, with their ancestors and list keys."""
    result = nodes.ffi.new("struct lyd_node **", nodes.ffi.NULL)
    for node in nodes.find_all(ctx, first, xpath):
        copy = nodes.dup(node, with_parents=True)
        if nodes.lib.lyd_merge_tree(result, nodes.top_of(copy), nodes.lib.LYD_MERGE_DESTRUCT):
            raise nodes.fail(ctx)
    return result[0]


def fields_xpath(target: str | None, fields: str) -> str:
    """RFC 8040 4.8.3 ``fields`` as an XPath union relative to the target."""
    base = "" if target is None else target
    return " | ".join(f"{base}/{path}" for path in expand_fields(fields))


def expand_fields(fields: str) -> list[str]:
    """``a/b;c(d;e/f)`` is ``["a/b", "c/d", "c/e/f"]``."""
    paths: list[str] = []
    for part in split_top(fields, ";"):
        if "(" in part:
            head, _, rest = part.partition("(")
            if not rest.endswith(")"):
                raise refuse("invalid-value", f"unbalanced fields expression: {fields}")
            paths += [f"{head}/{inner}" for inner in expand_fields(rest[:-1])]
        elif part:
            paths.append(part)
    return paths


def split_top(text: str, separator: str) -> list[str]:
    """Split at separators outside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == separator and not depth:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def trim_depth(node: Node, depth: int) -> None:
    """Free what lies deeper than ``depth`` below ``node`` (depth 1: the node alone).

    List keys stay with their entry (RFC 8040 4.8.2 counts a list entry and its keys as one).
    """
    level = [node]
    for _ in range(depth - 1):
        level = [child for parent in level for child in nodes.children(parent)]
    for parent in level:
        for child in list(nodes.children(parent)):
            if not child.schema.flags & nodes.lib.LYS_KEY:
                nodes.lib.lyd_free_tree(child)


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
            tree = select(ctx, tree, fields_xpath(request.path, request.fields))
            owned.append(tree)
            if request.path is not None and nodes.find(ctx, tree, request.path) is None:
                tree = nodes.new_path(ctx, tree or None, request.path)
                owned.append(tree)
        if request.depth:
            tree = _depth_copy(ctx, tree, request)
            owned.append(tree)
        return print_target(ctx, tree, request)
    finally:
        for node in owned:
            nodes.free_all(node)


def _depth_copy(ctx: Any, tree: Node, request: ReadRequest) -> Node:
    if request.path is None:
        copy = nodes.ffi.new("struct lyd_node **")
        if tree and nodes.lib.lyd_dup_siblings(
            tree, nodes.ffi.NULL, nodes.lib.LYD_DUP_RECURSIVE, copy
        ):
            raise nodes.fail(ctx)
        for top in list(nodes.siblings(copy[0])):
            trim_depth(top, request.depth or 1)
        return copy[0]
    target = nodes.find(ctx, tree, request.path)
    if target is None:
        return nodes.ffi.NULL
    copy = nodes.dup(target, with_parents=True)
    trim_depth(copy, request.depth or 1)
    return nodes.top_of(copy)


def within(path: str | None, region: str) -> bool:
    """Whether a read of ``path`` and a subtree at ``region`` overlap."""
    if path is None:
        return True
    return datapath.is_within(path, region) or datapath.is_within(region, path)
