"""Walks of the compiled schema that the validation plan (:mod:`.plan`) is built from.

Pure questions about ``struct lysc_node`` trees: paths, descendants, the must/when of a node,
its leafref types, its siblings, and whether the nodes around a small validation tree could make
libyang report something the real tree does not have (RFC 7950 7.6.5 mandatory, 7.7.5
min-elements, 7.5.3 must, 7.21.5 when).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from controller.model import native, nodes
from controller.types import SchemaPath

LEAFREF = nodes.lib.LY_TYPE_LEAFREF
UNION = nodes.lib.LY_TYPE_UNION
INST = nodes.lib.LY_TYPE_INST
_PATH_BUF = 1024
_GETNEXT_WITHCHOICE = 0x01  # LYS_GETNEXT_WITHCHOICE of tree_schema.h
_OPERATIONS = nodes.lib.LYS_RPC | nodes.lib.LYS_ACTION | nodes.lib.LYS_NOTIF
_MULTI = nodes.lib.LYS_LIST | nodes.lib.LYS_LEAFLIST
_SCHEMA_ONLY = nodes.lib.LYS_CHOICE | nodes.lib.LYS_CASE
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.)]*")


def schema_path(snode: Any) -> SchemaPath:
    """The data path of a schema node, without predicates (choice and case left out)."""
    buf = nodes.ffi.new("char[]", _PATH_BUF)
    snode = nodes.ffi.cast("struct lysc_node *", snode)
    nodes.lib.lysc_path(snode, nodes.lib.LYSC_PATH_DATA, buf, _PATH_BUF)
    return SchemaPath(str(nodes.ffi.string(buf).decode()))


def name(snode: Any) -> str:
    """The name of a schema node."""
    return str(nodes.ffi.string(snode.name).decode())


def within(snode: Any, ancestor: Any) -> bool:
    """Whether ``snode`` is ``ancestor`` or one of its descendants."""
    while snode:
        if snode == ancestor:
            return True
        snode = snode.parent
    return False


def walk(snode: Any) -> Iterator[Any]:
    """A schema node and all its descendants (choice and case included, operations not)."""
    stack = [snode]
    while stack:
        current = stack.pop()
        yield current
        child = nodes.lib.lysc_node_child(current)
        while child:
            if not child.nodetype & _OPERATIONS:
                stack.append(child)
            child = child.next


def module_top(module: Any) -> Iterator[Any]:
    """The top-level nodes of a module, choices as themselves."""
    snode = nodes.lib.lys_getnext(nodes.ffi.NULL, nodes.ffi.NULL, module, _GETNEXT_WITHCHOICE)
    while snode:
        yield snode
        snode = nodes.lib.lys_getnext(snode, nodes.ffi.NULL, module, _GETNEXT_WITHCHOICE)


def top_nodes(ctx: Any) -> Iterator[Any]:
    """The top-level nodes of every implemented module."""
    index = nodes.ffi.new("uint32_t *", 0)
    module = nodes.lib.ly_ctx_get_module_iter(ctx, index)
    while module:
        if module.implemented and module.compiled:
            yield from module_top(module.compiled)
        module = nodes.lib.ly_ctx_get_module_iter(ctx, index)


def array(items: Any) -> Iterator[Any]:
    """Items of a libyang sized array (the count is stored just before the first item)."""
    if items == nodes.ffi.NULL:
        return
    count = int(nodes.ffi.cast("uint64_t *", items)[-1])
    for index in range(count):
        yield items[index]


def expressions(snode: Any) -> Iterator[tuple[Any, Any, Any]]:
    """(context node, expression, prefixes) of each must and when of a schema node."""
    for item in array(nodes.lib.lysc_node_musts(snode)):
        yield snode, item.cond, item.prefixes
    for when in array(nodes.lib.lysc_node_when(snode)):
        yield when.context, when.cond, when.prefixes


def expression_text(expr: Any) -> str:
    """The source text of a compiled XPath expression."""
    return str(nodes.ffi.string(nodes.lib.lyxp_get_expr(expr)).decode())


def atoms(context: Any, snode: Any, expr: Any, prefixes: Any) -> list[Any] | None:
    """The schema nodes an expression may read (``lys_find_expr_atoms``), None if unknown."""
    return native.expression_atoms(context, snode.module, expr, prefixes)


def leafref_types(snode: Any) -> Iterator[Any]:
    """The leafref and instance-identifier types of a leaf or leaf-list (unions opened)."""
    if not snode.nodetype & (nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST):
        return
    stack = [nodes.ffi.cast("struct lysc_node_leaf *", snode).type]
    while stack:
        ltype = stack.pop()
        if ltype.basetype in (LEAFREF, INST):
            yield ltype
        elif ltype.basetype == UNION:
            stack.extend(array(nodes.ffi.cast("struct lysc_type_union *", ltype).types))


def is_config(snode: Any) -> bool:
    """A configuration node (``config true``)."""
    return bool(snode.flags & nodes.lib.LYS_CONFIG_W)


def is_multi(snode: Any) -> bool:
    """A list or leaf-list."""
    return bool(snode.nodetype & _MULTI)


def under_containers(snode: Any) -> bool:
    """No list or leaf-list above the node (containers, choices and cases only)."""
    parent = snode.parent
    while parent:
        if parent.nodetype not in (
            nodes.lib.LYS_CONTAINER,
            nodes.lib.LYS_CHOICE,
            nodes.lib.LYS_CASE,
        ):
            return False
        parent = parent.parent
    return True


def holds_multi(snode: Any) -> bool:
    """Whether a list or leaf-list lies below the node."""
    return any(is_multi(child) for child in walk(snode) if child != snode)


def data_depth(snode: Any, ancestor: Any) -> int:
    """Data steps from ``ancestor`` down to ``snode`` (choice and case are not steps)."""
    depth = 0
    while snode and snode != ancestor:
        if not snode.nodetype & _SCHEMA_ONLY:
            depth += 1
        snode = snode.parent
    return depth


def stays_below(text: str, depth: int) -> bool:
    """Whether an XPath text can only read below its start node's ``depth``-th ancestor.

    Conservative and textual: no absolute location path, no ``deref()``, and no more ``..``
    steps in the whole expression than ``depth``.
    """
    plain = _strip_literals(text)
    if "deref(" in plain or plain.count("..") > depth:
        return False
    previous = ""
    for char in plain:
        if char == "/" and previous not in _NAME_CHARS:
            return False  # a path that starts at the root
        if not char.isspace():
            previous = char
    return True


def _strip_literals(text: str) -> str:
    out: list[str] = []
    quote: str | None = None
    for char in text:
        if quote is not None:
            quote = None if char == quote else quote
            continue
        if char in "'\"":
            quote = char
            out.append("''")
        else:
            out.append(char)
    return "".join(out)


def siblings(snode: Any) -> Iterator[Any]:
    """The schema siblings of a node (a top-level node: its module's top-level nodes)."""
    if snode.parent:
        child = nodes.lib.lysc_node_child(snode.parent)
        while child:
            yield child
            child = child.next
    else:
        yield from module_top(snode.module.compiled)


def _implicit(snode: Any) -> bool:
    """Whether libyang may create the node by itself (a default or a non-presence container)."""
    if snode.nodetype == nodes.lib.LYS_CONTAINER:
        return not snode.flags & nodes.lib.LYS_PRESENCE
    if snode.nodetype & (nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST):
        return bool(snode.flags & nodes.lib.LYS_SET_DFLT)
    return bool(snode.nodetype & _SCHEMA_ONLY)


def noisy(snode: Any) -> bool:
    """Whether an absent config node makes libyang complain (mandatory, min-elements) or its
    implicit instances carry must/when that a small tree cannot satisfy."""
    if not is_config(snode):
        return False
    if snode.flags & nodes.lib.LYS_MAND_TRUE:
        return True
    return _implicit(snode) and any(
        next(expressions(child), None) is not None for child in walk(snode) if _implicit(child)
    )


def context_problem(snode: Any) -> str | None:
    """Why a copy of ``snode`` with its ancestors would not validate as the real tree does.

    The small tree holds the node and its ancestors only: a mandatory sibling of any of them, a
    must/when on an ancestor, or a mandatory choice or one with a default case above the node
    would make libyang judge what the copy lacks.
    """
    node = snode
    while True:
        parent = node.parent
        if not (parent and parent.nodetype == nodes.lib.LYS_CHOICE):
            for sibling in siblings(node):
                if sibling != node and noisy(sibling):
                    return f"{schema_path(sibling)} is mandatory or has constrained defaults"
        if not parent:
            return None
        if next(expressions(parent), None) is not None:
            return f"must/when on the ancestor {name(parent)}"
        if parent.nodetype == nodes.lib.LYS_CHOICE:
            if parent.flags & nodes.lib.LYS_MAND_TRUE:
                return f"the mandatory choice {name(parent)} above it"
            if any(case.flags & nodes.lib.LYS_SET_DFLT for case in siblings(node)):
                return f"the choice {name(parent)} above it has a default case"
        node = parent


def rivals(snode: Any) -> list[Any]:
    """Data nodes of the other cases of every choice above ``snode`` (RFC 7950 7.9.2)."""
    found: list[Any] = []
    node = snode
    while node.parent:
        parent = node.parent
        if parent.nodetype == nodes.lib.LYS_CHOICE:
            for case in siblings(node):
                if case != node:
                    found.extend(_case_data(case))
        node = parent
    return found


def _case_data(case: Any) -> Iterator[Any]:
    child = nodes.lib.lysc_node_child(case)
    while child:
        if child.nodetype & _SCHEMA_ONLY:
            yield from _case_data(child)
        else:
            yield child
        child = child.next


def choice_parent(snode: Any) -> Any:
    """The nearest data ancestor of the highest choice above ``snode`` (NULL: the root)."""
    node, highest = snode, None
    while node.parent:
        if node.parent.nodetype == nodes.lib.LYS_CHOICE:
            highest = node.parent
        node = node.parent
    if highest is None:
        return None
    parent = highest.parent
    while parent and parent.nodetype & _SCHEMA_ONLY:
        parent = parent.parent
    return parent or nodes.ffi.NULL
