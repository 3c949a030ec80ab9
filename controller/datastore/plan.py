"""Which lists can be validated entry by entry: a plan derived from the compiled schema.

docs/notes/validation-cost.md argues that a one-entry edit of list ``L`` can only break
constraints that read the entry. A list is a *unit* (its entries are validated locally, on a
small tree) when every such constraint is either inside the entry, or one the datastore checks
with an index. This module decides that for every config list of every loaded module, by
walking the compiled schema once:

* ``L`` sits under containers only (no list, choice or case above it; not top-level, so an
  absolute path to another entry must pass through an ancestor container);
* every ``must``/``when`` in ``L``'s subtree reads (``lys_find_expr_atoms``) only nodes in
  ``L``'s subtree, and no expression outside ``L`` reads a node in ``L``'s subtree;
* every ``require-instance`` leafref in ``L``'s subtree is a direct leaf of ``L`` whose path
  has no predicate and points at the single key of another unit (reference counted) or at a
  leaf under containers only (copied into the small tree);
* every leafref pointing into ``L`` points at ``L``'s single key from a tracked leafref of a
  unit (so deleting an entry is checked against a reference count);
* no config ``instance-identifier`` requires an instance anywhere (its target is unknowable).

Anything else is *not* a unit, and edits touching it fall back to whole-tree validation.
Keys, ``unique``, ``min-elements``/``max-elements`` of a unit are index checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from controller.model import native, nodes

_LEAFREF = nodes.lib.LY_TYPE_LEAFREF
_UNION = nodes.lib.LY_TYPE_UNION
_INST = nodes.lib.LY_TYPE_INST
_PATH_BUF = 1024


def schema_path(snode: Any) -> str:
    """The data path of a schema node, without predicates."""
    buf = nodes.ffi.new("char[]", _PATH_BUF)
    snode = nodes.ffi.cast("struct lysc_node *", snode)
    nodes.lib.lysc_path(snode, nodes.lib.LYSC_PATH_DATA, buf, _PATH_BUF)
    return str(nodes.ffi.string(buf).decode())


def _name(snode: Any) -> str:
    return str(nodes.ffi.string(snode.name).decode())


def _within(snode: Any, ancestor: Any) -> bool:
    while snode:
        if snode == ancestor:
            return True
        snode = snode.parent
    return False


@dataclass(frozen=True, slots=True)
class OutRef:
    """A tracked leafref leaf of a unit entry and what it points at."""

    leaf: str  # name of the direct child leaf
    target_list: str | None  # schema path of the referenced unit list (its single key)
    target_key: str | None
    target_leaf: str | None  # data path of a container-only target leaf


@dataclass
class Unit:
    """A list whose entries are validated locally."""

    snode: Any
    path: str  # schema path of the list (= data path of its parent + list name)
    depth: int  # number of steps of an entry path
    keys: tuple[str, ...]
    uniques: tuple[tuple[str, ...], ...]
    min_elements: int
    max_elements: int
    out_refs: list[OutRef] = field(default_factory=list)
    incoming: bool = False  # some tracked leafref points at this list's key


@dataclass
class Plan:
    """The units of a schema, by schema path, and why the others are not."""

    units: dict[str, Unit]
    refused: dict[str, str]


def _walk(snode: Any) -> Iterator[Any]:
    """A schema node and all its descendants (choice and case included, operations not)."""
    stack = [snode]
    while stack:
        current = stack.pop()
        yield current
        child = nodes.lib.lysc_node_child(current)
        while child:
            if not child.nodetype & (
                nodes.lib.LYS_RPC | nodes.lib.LYS_ACTION | nodes.lib.LYS_NOTIF
            ):
                stack.append(child)
            child = child.next


def _top_nodes(ctx: Any) -> Iterator[Any]:
    index = nodes.ffi.new("uint32_t *", 0)
    module = nodes.lib.ly_ctx_get_module_iter(ctx, index)
    while module:
        if module.implemented and module.compiled:
            snode = nodes.lib.lys_getnext(nodes.ffi.NULL, nodes.ffi.NULL, module.compiled, 0)
            while snode:
                yield snode
                snode = nodes.lib.lys_getnext(snode, nodes.ffi.NULL, module.compiled, 0)
        module = nodes.lib.ly_ctx_get_module_iter(ctx, index)


def _expressions(snode: Any) -> Iterator[tuple[Any, Any, Any]]:
    """(context node, expression, prefixes) of each must and when of a schema node."""
    must = nodes.lib.lysc_node_musts(snode)
    for item in _array(must):
        yield snode, item.cond, item.prefixes
    whens = nodes.lib.lysc_node_when(snode)
    for when in _array(whens):
        yield when.context, when.cond, when.prefixes


def _array(array: Any) -> Iterator[Any]:
    """Items of a libyang sized array (the count is stored just before the first item)."""
    if array == nodes.ffi.NULL:
        return
    count = int(nodes.ffi.cast("uint64_t *", array)[-1])
    for index in range(count):
        yield array[index]


def _leafref_types(snode: Any) -> Iterator[Any]:
    """The leafref and instance-identifier types of a leaf or leaf-list (unions opened)."""
    if not snode.nodetype & (nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST):
        return
    stack = [nodes.ffi.cast("struct lysc_node_leaf *", snode).type]
    while stack:
        ltype = stack.pop()
        if ltype.basetype in (_LEAFREF, _INST):
            yield ltype
        elif ltype.basetype == _UNION:
            stack.extend(_array(nodes.ffi.cast("struct lysc_type_union *", ltype).types))


def _candidate(snode: Any) -> bool:
    """A config list under containers only, not top-level."""
    if snode.nodetype != nodes.lib.LYS_LIST or not snode.flags & nodes.lib.LYS_CONFIG_W:
        return False
    parent = snode.parent
    if not parent:
        return False
    while parent:
        if parent.nodetype != nodes.lib.LYS_CONTAINER:
            return False
        parent = parent.parent
    return True


def _unit(snode: Any) -> Unit:
    compiled = nodes.ffi.cast("struct lysc_node_list *", snode)
    keys = []
    child = nodes.lib.lysc_node_child(snode)
    while child:
        if child.flags & nodes.lib.LYS_KEY:
            keys.append(_name(child))
        child = child.next
    uniques = tuple(
        tuple(schema_path(leaf)[len(schema_path(snode)) + 1 :] for leaf in _array(unique))
        for unique in _array(compiled.uniques)
    )
    path = schema_path(snode)
    return Unit(snode, path, path.count("/"), tuple(keys), uniques, compiled.min, compiled.max)


def _owner(units: dict[str, Unit], snode: Any) -> Unit | None:
    return next((u for u in units.values() if _within(snode, u.snode)), None)


class _Planner:
    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.config = [
            n for top in _top_nodes(ctx) for n in _walk(top) if n.flags & nodes.lib.LYS_CONFIG_W
        ]
        self.units = {schema_path(n): _unit(n) for n in self.config if _candidate(n)}
        self.refused: dict[str, str] = {}

    def refuse(self, unit: Unit | None, reason: str) -> None:
        if unit is not None and unit.path in self.units:
            del self.units[unit.path]
            self.refused[unit.path] = reason

    def expressions(self) -> None:
        for snode in self.config:
            for context, expr, prefixes in _expressions(snode):
                atoms = native.expression_atoms(context, snode.module, expr, prefixes)
                home = _owner(self.units, snode)
                if atoms is None:
                    self.refuse(home, "an expression libyang cannot analyse")
                    continue
                for unit in list(self.units.values()):
                    reads = any(_within(atom, unit.snode) for atom in atoms)
                    local = home is unit and all(_within(a, unit.snode) for a in atoms)
                    if (reads or home is unit) and not local:
                        self.refuse(unit, f"non-local must/when on {schema_path(snode)}")

    def leafrefs(self) -> list[tuple[Unit | None, Any, Any]]:
        refs: list[tuple[Unit | None, Any, Any]] = []
        for snode in self.config:
            for ltype in _leafref_types(snode):
                if ltype.basetype == _INST:
                    if nodes.ffi.cast("struct lysc_type_instanceid *", ltype).require_instance:
                        for unit in list(self.units.values()):
                            self.refuse(unit, "an instance-identifier requires an instance")
                    continue
                lref = nodes.ffi.cast("struct lysc_type_leafref *", ltype)
                if lref.require_instance:
                    refs.append((_owner(self.units, snode), snode, lref))
        return refs

    def resolve(self, snode: Any, lref: Any) -> Any:
        expr = nodes.ffi.string(nodes.lib.lyxp_get_expr(lref.path)).decode()
        found = nodes.ffi.new("struct ly_set **")
        if nodes.lib.lys_find_xpath(self.ctx, snode, expr.encode(), 0, found):
            nodes.lib.ly_err_clean(self.ctx, nodes.ffi.NULL)
            return None, expr
        target = found[0].snodes[0] if found[0].count == 1 else None
        nodes.lib.ly_set_free(found[0], nodes.ffi.NULL)
        return target, expr

    def track(self, refs: list[tuple[Unit | None, Any, Any]]) -> None:
        changed = True
        while changed:
            changed = False
            for unit in self.units.values():
                unit.out_refs, unit.incoming = [], False
            for home, snode, lref in refs:
                target, expr = self.resolve(snode, lref)
                if not self._track_one(home, snode, target, expr):
                    changed = True
                    break

    def _track_one(self, home: Unit | None, snode: Any, target: Any, expr: str) -> bool:
        """Record one leafref; False (after refusing a unit) when it cannot be tracked."""
        into = _owner(self.units, target) if target is not None else None
        direct = (
            home is not None and snode.parent == home.snode and snode.nodetype == nodes.lib.LYS_LEAF
        )
        simple = target is not None and "[" not in expr
        if into is not None:
            key_target = simple and target.parent == into.snode and into.keys == (_name(target),)
            if not (key_target and direct) or home is None:
                self.refuse(into, f"untracked leafref into it from {schema_path(snode)}")
                return False
            into.incoming = True
            home.out_refs.append(OutRef(_name(snode), into.path, _name(target), None))
            return True
        if home is None:
            return True  # from outside every unit to outside every unit: full validation
        plain = simple and _container_only(target)
        if not (direct and plain):
            self.refuse(home, f"leafref {schema_path(snode)} cannot be checked locally")
            return False
        home.out_refs.append(OutRef(_name(snode), None, None, schema_path(target)))
        return True


def _container_only(snode: Any) -> bool:
    parent = snode.parent
    while parent:
        if parent.nodetype != nodes.lib.LYS_CONTAINER:
            return False
        parent = parent.parent
    return bool(snode.nodetype == nodes.lib.LYS_LEAF)


def plan(ctx: Any) -> Plan:
    """Decide, for every config list of the schema, whether its entries are units."""
    planner = _Planner(ctx)
    planner.expressions()
    planner.track(planner.leafrefs())
    return Plan(planner.units, planner.refused)
