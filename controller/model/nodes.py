"""Data-tree primitives on libyang's C API: parse, find, copy, link, print, free.

A node is a cffi ``struct lyd_node *``. These functions are the datastore layer's only way to
touch a tree; every libyang failure becomes a :class:`~controller.model.errors.ModelError` with
libyang's structured items (:func:`~controller.model.schema.take_errors`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from _libyang import ffi, lib

from controller.errors import ErrorItem, ErrorType
from controller.model import native
from controller.model.errors import ModelError
from controller.model.schema import Encoding, take_errors
from controller.types import DataPath

__all__ = [
    "CtxP",
    "Node",
    "check_schema_path",
    "children",
    "clean_errors",
    "dup",
    "fail",
    "ffi",
    "find",
    "find_all",
    "free",
    "free_all",
    "is_user_ordered",
    "lib",
    "link",
    "move_after",
    "move_before",
    "name_of",
    "native",
    "new_path",
    "parent_of",
    "parse_data",
    "parse_op",
    "parse_printed",
    "path_of",
    "print_tree",
    "siblings",
    "top_of",
    "unlink",
    "validate_all",
    "value_of",
]

Node = Any  # struct lyd_node *
CtxP = Any  # struct ly_ctx *

PARSE_EDIT = lib.LYD_PARSE_ONLY | lib.LYD_PARSE_STRICT
VALIDATE_CONFIG = lib.LYD_VALIDATE_NO_STATE
PATH_BUF = 4096


def _fmt(encoding: Encoding) -> int:
    return int(lib.LYD_JSON if encoding is Encoding.JSON else lib.LYD_XML)


def clean_errors(ctx: CtxP) -> None:
    """Forget the errors libyang stored for this thread (``ly_err_clean``).

    libyang keeps the errors of each thread until they are taken; one a call left behind
    (a failed look-up whose failure was the answer) would otherwise be reported with the
    next real error of the same thread, as a second rpc-error. Every request starts clean.
    """
    lib.ly_err_clean(ctx, ffi.NULL)


def fail(ctx: CtxP) -> ModelError:
    """The error libyang stored for the last failed call."""
    return ModelError(*take_errors(ctx))


def parse_data(
    ctx: CtxP, text: str, encoding: Encoding, parent: Node = None, *, state: bool = False
) -> Node:
    """Parse an instance document without validating it (types, ranges and names are checked).

    With ``parent`` the document holds children of that node and they are linked under it; the
    first parsed top-level sibling is returned otherwise (NULL for an empty document).
    """
    opts = PARSE_EDIT if state else PARSE_EDIT | lib.LYD_PARSE_NO_STATE
    return _parse(ctx, text, encoding, parent, opts)


def parse_printed(ctx: CtxP, text: str) -> Node:
    """Parse an RFC 7951 configuration document that libyang printed, in linear time.

    ``LYD_PARSE_ORDERED`` appends every node where libyang would otherwise search its place
    among the top-level siblings (a scan each); only libyang's own output is in that order.
    """
    return _parse(
        ctx, text, Encoding.JSON, None, PARSE_EDIT | lib.LYD_PARSE_NO_STATE | lib.LYD_PARSE_ORDERED
    )


def print_lyb(first: Node) -> bytes:
    """The whole tree (``first`` and its siblings) in libyang's binary format (LYB), with every
    node, default ones too, and its flags."""
    buffer = ffi.new("char **")
    out = ffi.new("struct ly_out **")
    if lib.ly_out_new_memory(buffer, 0, out) != lib.LY_SUCCESS:
        raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "no memory"))
    try:
        if lib.lyd_print_all(out[0], first, lib.LYD_LYB, 0) != lib.LY_SUCCESS:
            raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "print failed"))
        return bytes(ffi.buffer(buffer[0], native.out_printed(out[0])))
    finally:
        lib.ly_out_free(out[0], ffi.NULL, 1)


def parse_lyb(ctx: CtxP, data: bytes | memoryview, *, newer_modules: bool = False) -> Node:
    """Parse a LYB document :func:`print_lyb` printed, without validating it (its nodes keep
    the flags they were printed with). ``newer_modules`` accepts newer revisions of its
    modules (``LYD_PARSE_LYB_MOD_UPDATE``)."""
    opts = PARSE_EDIT | lib.LYD_PARSE_NO_STATE | lib.LYD_PARSE_ORDERED
    if newer_modules:
        opts |= lib.LYD_PARSE_LYB_MOD_UPDATE
    tree = ffi.new("struct lyd_node **", ffi.NULL)
    source = ffi.from_buffer(data)  # LYB carries its lengths: no terminating NUL needed
    if lib.lyd_parse_data_mem(ctx, source, lib.LYD_LYB, opts, 0, tree) != lib.LY_SUCCESS:
        if tree[0]:
            lib.lyd_free_all(tree[0])
        raise fail(ctx)
    return tree[0]


def _parse(ctx: CtxP, text: str, encoding: Encoding, parent: Node, opts: int) -> Node:
    source = ffi.new("char[]", text.encode())
    stream = ffi.new("struct ly_in **")
    if lib.ly_in_new_memory(source, stream) != lib.LY_SUCCESS:
        raise fail(ctx)
    tree = ffi.new("struct lyd_node **", ffi.NULL)
    try:
        parent_p = ffi.NULL if parent is None else parent
        ret = lib.lyd_parse_data(ctx, parent_p, stream[0], _fmt(encoding), opts, 0, tree)
    finally:
        lib.ly_in_free(stream[0], 0)
    if ret != lib.LY_SUCCESS:
        if parent is None and tree[0]:
            lib.lyd_free_all(tree[0])
        raise fail(ctx)
    return tree[0]


def parse_op(ctx: CtxP, text: str, encoding: Encoding, op_type: int) -> tuple[Node, Node]:
    """``lyd_parse_op`` of a YANG-form RPC, reply or notification: (whole tree, operation)."""
    source = ffi.new("char[]", text.encode())
    stream = ffi.new("struct ly_in **")
    if lib.ly_in_new_memory(source, stream) != lib.LY_SUCCESS:
        raise fail(ctx)
    tree = ffi.new("struct lyd_node **", ffi.NULL)
    op = ffi.new("struct lyd_node **", ffi.NULL)
    try:
        ret = lib.lyd_parse_op(ctx, ffi.NULL, stream[0], _fmt(encoding), op_type, tree, op)
    finally:
        lib.ly_in_free(stream[0], 0)
    if ret != lib.LY_SUCCESS:
        if tree[0]:
            lib.lyd_free_all(tree[0])
        raise fail(ctx)
    return tree[0], op[0]


def find(ctx: CtxP, tree: Node, path: str, *, absolute: str | None = None) -> Node | None:
    """The node at a data path (key predicates are hash lookups), None when there is none.

    A path the schema does not have is an ``unknown-element`` error, not "absent". ``path``
    may be relative to ``tree``; then ``absolute`` is the whole path, the one checked against
    the schema when nothing is found (``lyd_new_path`` needs a parent for a relative one).
    """
    whole = absolute or path
    if tree == ffi.NULL or tree is None:
        check_schema_path(ctx, whole)
        return None
    out = ffi.new("struct lyd_node **")
    ret = lib.lyd_find_path(tree, path.encode(), 0, out)
    if ret == lib.LY_SUCCESS:
        return out[0]
    lib.ly_err_clean(ctx, ffi.NULL)
    if ret == lib.LY_ENOTFOUND:
        return None
    check_schema_path(ctx, whole)  # LY_EINCOMPLETE (only an ancestor exists), or a bad path
    return None


def check_schema_path(ctx: CtxP, path: str) -> None:
    """Refuse a data path whose nodes the schema does not define."""
    created = ffi.new("struct lyd_node **")
    ret = lib.lyd_new_path(ffi.NULL, ctx, path.encode(), ffi.NULL, lib.LYD_NEW_PATH_OPAQ, created)
    if ret == lib.LY_SUCCESS:
        lib.lyd_free_all(created[0])
        return
    items = take_errors(ctx)
    raise ModelError(
        *(
            ErrorItem(ErrorType.APPLICATION, "unknown-element", item.message, path)
            if item.tag in ("invalid-value", "operation-failed")
            else item
            for item in items
        )
    )


def find_all(ctx: CtxP, tree: Node, xpath: str) -> list[Node]:
    """The nodes an XPath expression selects (``lyd_find_xpath``)."""
    if tree == ffi.NULL or tree is None:
        return []
    found = ffi.new("struct ly_set **")
    if lib.lyd_find_xpath(tree, xpath.encode(), found) != lib.LY_SUCCESS:
        # libyang locates the error at the tree it evaluated on, a node unrelated to the
        # expression: the error is the expression's, with no error-path
        items = take_errors(ctx)
        raise ModelError(*(replace(item, path=None) for item in items))
    nodes = [found[0].dnodes[index] for index in range(int(found[0].count))]
    lib.ly_set_free(found[0], ffi.NULL)
    return nodes


def new_path(ctx: CtxP, parent: Node, path: str, *, output: bool = False) -> Node:
    """Create the nodes of a path (``lyd_new_path``); returns the first node created."""
    created = ffi.new("struct lyd_node **")
    opts = lib.LYD_NEW_PATH_OUTPUT if output else 0
    parent_p = ffi.NULL if parent is None else parent
    if lib.lyd_new_path(parent_p, ctx, path.encode(), ffi.NULL, opts, created) != lib.LY_SUCCESS:
        raise fail(ctx)
    return created[0]


def dup(node: Node, *, recursive: bool = True, with_parents: bool = False) -> Node:
    """A copy of a node (``lyd_dup_single``), with its subtree and/or its ancestors."""
    opts = lib.LYD_DUP_WITH_FLAGS
    if recursive:
        opts |= lib.LYD_DUP_RECURSIVE
    if with_parents:
        opts |= lib.LYD_DUP_WITH_PARENTS
    out = ffi.new("struct lyd_node **")
    if lib.lyd_dup_single(node, ffi.NULL, opts, out) != lib.LY_SUCCESS:
        raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "copy failed"))
    return out[0]


def path_of(node: Node) -> DataPath:
    """The data path of a node, with key predicates (``lyd_path``)."""
    buf = ffi.new("char[]", PATH_BUF)
    if lib.lyd_path(node, lib.LYD_PATH_STD, buf, PATH_BUF) == ffi.NULL:
        raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "path too long"))
    return DataPath(str(ffi.string(buf).decode()))


def top_of(node: Node) -> Node:
    """The top-level ancestor of a node."""
    while node.parent:
        node = ffi.cast("struct lyd_node *", node.parent)
    return node


def parent_of(node: Node) -> Node | None:
    """The parent of a node, None at the top level."""
    return ffi.cast("struct lyd_node *", node.parent) if node.parent else None


def children(node: Node) -> Iterator[Node]:
    """The children of a data node."""
    child = lib.lyd_child(node)
    while child:
        yield child
        child = child.next


def siblings(first: Node) -> Iterator[Node]:
    """A node and its following siblings."""
    while first:
        yield first
        first = first.next


def name_of(node: Node) -> str:
    """The schema name of a data node."""
    return str(ffi.string(node.schema.name).decode())


def value_of(node: Node) -> str:
    """The canonical value of a terminal node."""
    return str(ffi.string(lib.lyd_get_value(node)).decode())


def is_user_ordered(node: Node) -> bool:
    """Whether a node is an instance of an ``ordered-by user`` list or leaf-list."""
    return bool(node.schema and node.schema.flags & lib.LYS_ORDBY_USER)


def link(parent: Node | None, first: Any, node: Node) -> None:
    """Add ``node`` under ``parent`` (or among the top-level siblings starting at ``first[0]``)."""
    if parent is not None:
        if lib.lyd_insert_child(parent, node) != lib.LY_SUCCESS:
            raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "insert failed"))
        return
    if not first[0]:
        first[0] = node
        return
    rc, new_first = native.insert_sibling(first[0], node)
    if rc != lib.LY_SUCCESS:
        raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "insert failed"))
    first[0] = lib.lyd_first_sibling(new_first)


def in_place(node: Node, source: Node) -> bool:
    """Whether :func:`take_content` applies: ``node`` is an ordered-by system list entry below
    a parent, not in a case, and neither it nor ``source`` has metadata."""
    schema = node.schema
    return bool(
        node.parent
        and schema
        and schema.nodetype == lib.LYS_LIST
        and not schema.flags & lib.LYS_ORDBY_USER
        and not (schema.parent and schema.parent.nodetype == lib.LYS_CASE)
        and not node.meta
        and not source.meta
    )


def take_content(node: Node, source: Node) -> None:
    """Make the list entry ``node`` hold what ``source`` (a detached instance of the same entry:
    the same keys) holds, in place: its children other than the keys are freed and the
    source's are moved under it, and ``source`` is freed. The entry keeps its position among
    its siblings, which relinking a copy of an ordered-by system entry would not (libyang
    appends it), and it costs the entry's children, not its list's instances."""
    for child in [c for c in children(node) if not c.schema.flags & lib.LYS_KEY]:
        native.unlink(child)
        lib.lyd_free_tree(child)
    for child in [c for c in children(source) if not c.schema.flags & lib.LYS_KEY]:
        native.unlink(child)
        link(node, None, child)
    lib.lyd_free_tree(source)


def unlink(first: Any, node: Node) -> None:
    """Detach a subtree, keeping ``first[0]`` the first top-level sibling."""
    if first[0] == node:
        first[0] = node.next if node.next else ffi.NULL
    native.unlink(node)


def free(first: Any, node: Node) -> None:
    """Detach and free a subtree."""
    unlink(first, node)
    lib.lyd_free_tree(node)


def move_before(first: Any, sibling: Node, node: Node) -> None:
    """Put an unlinked node just before ``sibling``."""
    if native.insert_before(sibling, node) != lib.LY_SUCCESS:
        raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "insert failed"))
    if first[0] == sibling:
        first[0] = lib.lyd_first_sibling(node)


def move_after(sibling: Node, node: Node) -> None:
    """Put an unlinked node just after ``sibling``."""
    if native.insert_after(sibling, node) != lib.LY_SUCCESS:
        raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "insert failed"))


def print_tree(node: Node, encoding: Encoding, flags: int = 0) -> str:
    """Print a subtree (with ``LYD_PRINT_WITHSIBLINGS`` in ``flags``: all following siblings)."""
    if node is None or node == ffi.NULL:
        return ""
    out = ffi.new("char **")
    if lib.lyd_print_mem(out, node, _fmt(encoding), flags) != lib.LY_SUCCESS:
        raise ModelError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "print failed"))
    if out[0] == ffi.NULL:
        return ""
    text = str(ffi.string(out[0]).decode())
    lib.free(out[0])
    return text


def validate_all(ctx: CtxP, first: Any, *, present: bool = False) -> None:
    """``lyd_validate_all`` of a configuration tree (defaults are added in place)."""
    opts = VALIDATE_CONFIG | (lib.LYD_VALIDATE_PRESENT if present else 0)
    if lib.lyd_validate_all(first, ctx, opts, ffi.NULL) != lib.LY_SUCCESS:
        raise fail(ctx)


def free_all(node: Node) -> None:
    """Free a whole tree (all siblings); NULL is fine."""
    if node is not None and node != ffi.NULL:
        lib.lyd_free_all(node)
