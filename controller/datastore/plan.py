"""Which parts of the data are validated locally: a plan derived from the compiled schema.

docs/notes/validation-cost.md argues that an edit confined to one *unit* instance can only break
constraints that read that instance. A unit is validated on a small tree (the instance with its
ancestors and a copy of what its leafrefs reach) plus the datastore's indexes for what crosses
its boundary. This module finds the units of every loaded module by walking the compiled schema
once. A unit is either

* a **list unit**: a config list with no list above it (top-level, or under containers,
  choices and cases). Lists nested in its entries belong to the entry: their keys, ``unique``
  and min/max-elements are scoped to a parent instance inside the entry, so the small tree
  covers them; or
* a **subtree unit**: a config container or leaf outside every list and holding none, as high
  as possible (a top-level container without lists, or a leaf next to a list).

A candidate stays a unit only when all of these hold:

* the nodes around its small tree are quiet (:func:`.schemawalk.context_problem`), its own
  min-elements is 0 (the small tree holds only the touched entries), and no choice above it is
  mandatory or has a default case;
* every must/when in its subtree reads (``lys_find_expr_atoms``) only its own subtree, and for a
  top-level list, textually stays inside the entry; no expression outside reads its subtree;
* every ``require-instance`` leafref in its subtree stays inside the same instance, or points
  at the single key of a list unit (reference counted) or at a leaf under containers only
  (copied into the small tree); every leafref into it comes from a unit and targets its key;
* no config ``instance-identifier`` requires an instance anywhere (its target is unknowable).

Anything else is *not* a unit (the reason is kept) and edits touching it are validated in full.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from controller.datastore import schemawalk as sw
from controller.model import nodes
from controller.types import DataPath, SchemaPath

schema_path = sw.schema_path
UNBOUNDED = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class OutRef:
    """A tracked leafref of a unit and what it points at."""

    leaf: str  # data path of the referring node relative to the unit node ("" for itself)
    multi: bool  # the path crosses a nested list or is a leaf-list: several instances
    target_list: SchemaPath | None  # the referenced list unit (its single key)
    target_key: str | None
    target_leaf: DataPath | None  # a container-only target leaf


@dataclass
class Unit:
    """A part of the data validated locally: a list's entries or one subtree."""

    snode: Any
    path: SchemaPath  # the data path without predicates
    depth: int  # number of steps of an instance path
    keys: tuple[str, ...]
    uniques: tuple[tuple[str, ...], ...]
    min_elements: int
    max_elements: int
    out_refs: list[OutRef] = field(default_factory=list)
    incoming: bool = False  # some tracked leafref points at this list's key
    subtree: bool = False  # a container or leaf, not a list
    rivals: tuple[Any, ...] = ()  # data nodes of other cases: their presence means fall back
    implicit: bool = False  # a top-level subtree libyang would re-create when deleted
    carry: tuple[str, ...] = ()  # mandatory leaves a copy of a referenced entry needs


@dataclass
class Plan:
    """The units of a schema, by schema path, and why the others are not."""

    units: dict[SchemaPath, Unit]
    refused: dict[SchemaPath, str]
    choice_scopes: tuple[SchemaPath, ...] = ()  # where libyang may drop a unit's case


def _list_unit(snode: Any) -> Unit:
    compiled = nodes.ffi.cast("struct lysc_node_list *", snode)
    keys = []
    child = nodes.lib.lysc_node_child(snode)
    while child:
        if child.flags & nodes.lib.LYS_KEY:
            keys.append(sw.name(child))
        child = child.next
    path = schema_path(snode)
    uniques = tuple(
        tuple(schema_path(leaf)[len(path) + 1 :] for leaf in sw.array(unique))
        for unique in sw.array(compiled.uniques)
    )
    return Unit(snode, path, path.count("/"), tuple(keys), uniques, compiled.min, compiled.max)


def _subtree_unit(snode: Any) -> Unit:
    path = schema_path(snode)
    implicit = not snode.parent and (
        (snode.nodetype == nodes.lib.LYS_CONTAINER and not snode.flags & nodes.lib.LYS_PRESENCE)
        or bool(snode.flags & nodes.lib.LYS_SET_DFLT)
    )
    return Unit(snode, path, path.count("/"), (), (), 0, UNBOUNDED, subtree=True, implicit=implicit)


def _data_parent(snode: Any) -> Any:
    parent = snode.parent
    while parent and parent.nodetype & (nodes.lib.LYS_CHOICE | nodes.lib.LYS_CASE):
        parent = parent.parent
    return parent


def _candidate(snode: Any) -> Unit | None:
    if not sw.is_config(snode) or not sw.under_containers(snode):
        return None
    if snode.nodetype == nodes.lib.LYS_LIST:
        return _list_unit(snode)
    if snode.nodetype not in (nodes.lib.LYS_CONTAINER, nodes.lib.LYS_LEAF) or sw.holds_multi(snode):
        return None
    parent = _data_parent(snode)
    if parent and not sw.holds_multi(parent):
        return None  # not the highest list-free node: its parent is the unit
    return _subtree_unit(snode)


def _owner(units: dict[SchemaPath, Unit], snode: Any) -> Unit | None:
    return next((u for u in units.values() if sw.within(snode, u.snode)), None)


def _local_expression(unit: Unit, context: Any, expr: Any, atoms: list[Any]) -> bool:
    """Whether an expression of ``unit``'s subtree reads only the same instance."""
    if not all(sw.within(atom, unit.snode) for atom in atoms):
        return False
    if unit.subtree or _data_parent(unit.snode):
        return True  # under a container, a path to another entry passes an outside atom
    start = context if context else unit.snode
    return sw.stays_below(sw.expression_text(expr), sw.data_depth(start, unit.snode))


class _Planner:
    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.config = [n for top in sw.top_nodes(ctx) for n in sw.walk(top) if sw.is_config(n)]
        self.units: dict[SchemaPath, Unit] = {}
        self.refused: dict[SchemaPath, str] = {}
        for snode in self.config:
            unit = _candidate(snode)
            if unit is not None:
                self.units[unit.path] = unit
        for unit in list(self.units.values()):
            self.refuse(unit, self._shape_problem(unit))

    @staticmethod
    def _shape_problem(unit: Unit) -> str | None:
        if unit.min_elements:
            return "min-elements: the small tree holds only the touched entries"
        problem = sw.context_problem(unit.snode)
        if problem is None:
            unit.rivals = tuple(sw.rivals(unit.snode))
        return problem

    def refuse(self, unit: Unit | None, reason: str | None) -> None:
        if reason is not None and unit is not None and unit.path in self.units:
            del self.units[unit.path]
            self.refused[unit.path] = reason

    def expressions(self) -> None:
        for snode in self.config:
            for context, expr, prefixes in sw.expressions(snode):
                atoms = sw.atoms(context, snode, expr, prefixes)
                home = _owner(self.units, snode)
                if atoms is None:
                    for unit in list(self.units.values()):
                        self.refuse(unit, f"{schema_path(snode)}: an expression not analysable")
                    continue
                for unit in list(self.units.values()):
                    reads = any(sw.within(atom, unit.snode) for atom in atoms)
                    local = home is unit and _local_expression(unit, context, expr, atoms)
                    if (reads or home is unit) and not local:
                        self.refuse(unit, f"non-local must/when on {schema_path(snode)}")

    def leafrefs(self) -> list[tuple[Any, Any]]:
        refs: list[tuple[Any, Any]] = []
        for snode in self.config:
            for ltype in sw.leafref_types(snode):
                if ltype.basetype == sw.INST:
                    if nodes.ffi.cast("struct lysc_type_instanceid *", ltype).require_instance:
                        for unit in list(self.units.values()):
                            self.refuse(unit, "an instance-identifier requires an instance")
                    continue
                lref = nodes.ffi.cast("struct lysc_type_leafref *", ltype)
                if lref.require_instance:
                    refs.append((snode, lref))
        return refs

    def resolve(self, snode: Any, lref: Any) -> tuple[Any, str]:
        """The schema node a leafref path points at: among the nodes the path touches
        (``lys_find_expr_atoms``, which understands the module's prefixes), the one leaf named
        by its last step."""
        expr = sw.expression_text(lref.path)
        last = re.split(r"[/:]", expr.rstrip())[-1]
        atoms = sw.atoms(snode, snode, lref.path, lref.prefixes) or []
        leaves = [
            atom
            for atom in atoms
            if atom != snode
            and atom.nodetype & (nodes.lib.LYS_LEAF | nodes.lib.LYS_LEAFLIST)
            and sw.name(atom) == last
        ]
        return (leaves[0] if len(leaves) == 1 else None), expr

    def track(self, refs: list[tuple[Any, Any]]) -> None:
        resolved = [(snode, *self.resolve(snode, lref)) for snode, lref in refs]
        changed = True
        while changed:
            changed = False
            for unit in self.units.values():
                unit.out_refs, unit.incoming = [], False
            for snode, target, expr in resolved:
                if not self._track_one(_owner(self.units, snode), snode, target, expr):
                    changed = True
                    break

    def _track_one(self, home: Unit | None, snode: Any, target: Any, expr: str) -> bool:
        """Record one leafref; False (after refusing a unit) when it cannot be tracked."""
        simple = target is not None and "[" not in expr
        inside = home is not None and simple and sw.within(target, home.snode)
        if (
            inside
            and home is not None
            and (home.subtree or sw.stays_below(expr, sw.data_depth(snode, home.snode)))
        ):
            return True  # inside the same instance: the small tree holds both ends
        into = _owner(self.units, target) if target is not None else None
        relative = schema_path(snode)[len(home.path) + 1 :] if home is not None else ""
        multi = home is not None and _multi_between(home.snode, snode)
        if into is not None:
            key_target = (
                simple
                and not into.subtree
                and target.parent == into.snode
                and into.keys == (sw.name(target),)
                and _key_copy_problem(into) is None
            )
            if not key_target or home is None:
                self.refuse(into, f"untracked leafref into it from {schema_path(snode)}")
                return False
            into.incoming = True
            ref = OutRef(relative, multi, into.path, sw.name(target), None)
            home.out_refs.append(ref)
            return True
        if home is None:
            return True  # from outside every unit to outside every unit: full validation
        plain = (
            simple
            and target.nodetype == nodes.lib.LYS_LEAF
            and sw.under_containers(target)
            and sw.context_problem(target) is None
        )
        if not plain:
            self.refuse(home, f"leafref {schema_path(snode)} cannot be checked locally")
            return False
        under_containers = DataPath(schema_path(target))  # no list above: no predicates
        home.out_refs.append(OutRef(relative, multi, None, None, under_containers))
        return True

    def scopes(self) -> tuple[SchemaPath, ...]:
        found: set[SchemaPath] = set()
        for unit in self.units.values():
            if unit.rivals:
                parent = sw.choice_parent(unit.snode)
                found.add(schema_path(parent) if parent else SchemaPath("/"))
        return tuple(sorted(found))


def _multi_between(ancestor: Any, snode: Any) -> bool:
    node = snode
    while node and node != ancestor:
        if sw.is_multi(node):
            return True
        node = node.parent
    return False


def _key_copy_problem(unit: Unit) -> str | None:
    """Why a copy of an entry's keys (a leafref target) would not validate by itself.

    Mandatory plain leaves are copied along (:attr:`Unit.carry`); anything else that libyang
    would judge on the copy (a must/when, a mandatory container, a constrained default) is a
    problem.
    """
    if next(sw.expressions(unit.snode), None) is not None:
        return "must/when on the list"
    carry = []
    child = nodes.lib.lysc_node_child(unit.snode)
    while child:
        if not child.flags & nodes.lib.LYS_KEY and sw.noisy(child):
            plain = (
                child.nodetype == nodes.lib.LYS_LEAF
                and next(sw.expressions(child), None) is None
                and next(sw.leafref_types(child), None) is None
            )
            if not plain:
                return f"{sw.name(child)} is mandatory or constrained"
            carry.append(sw.name(child))
        child = child.next
    unit.carry = tuple(carry)
    return None


def plan(ctx: Any) -> Plan:
    """Decide, for every config node of the schema, which units it belongs to."""
    planner = _Planner(ctx)
    planner.expressions()
    planner.track(planner.leafrefs())
    return Plan(planner.units, planner.refused, planner.scopes())
