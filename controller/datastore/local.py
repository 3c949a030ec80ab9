"""Entry-local validation with schema-derived indexes (docs/notes/validation-cost.md).

For a transaction whose every change lies inside instances of units (:mod:`.plan`: entries of
list units, with the lists nested in them, and list-free subtrees):

1. copy each touched instance, as it is after the edit, with its ancestors into a small tree,
   plus a key-only copy of every instance its tracked leafrefs point at (found by key lookup);
2. ``lyd_validate_all`` on the small tree: types, mandatory, nested lists, local must/when and
   the outgoing leafrefs, with libyang's own errors and absolute paths;
3. check the constraints that cross the entry against the indexes: ``unique``, min/max-elements
   and leafrefs pointing at a deleted entry, evaluated on the state *after* the transaction;
4. move the validated copies (now with their defaults) into the datastore.

Anything else (an edit above or outside the units, a parent created by the edit, data in another
case of a choice above the unit) is validated in full, counted in :class:`ValidationStats`.
Index changes wait in an overlay until :meth:`LocalValidation.settle`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from controller.datastore import datapath
from controller.datastore.api import Access
from controller.datastore.errors import DatastoreError
from controller.datastore.indexes import Indexes, Row, descendants
from controller.datastore.plan import Plan, Unit, plan
from controller.datastore.stores import ConfigStore
from controller.datastore.transaction import Applied
from controller.datastore.validation import IndexesNeededError, ValidationStats, validate_full
from controller.errors import CatsError
from controller.model import nodes
from controller.types import DataPath, SchemaPath

MAX_LOCAL_ENTRIES = 1000  # beyond this a whole-tree validation is as cheap


@dataclass(frozen=True, slots=True)
class Touched:
    """One unit entry a transaction touched."""

    unit: Unit
    path: DataPath


class LocalValidation:
    """The incremental :class:`~controller.datastore.validation.Validator`."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self._plan: Plan | None = None  # derived from the schema at first use
        self._built: Indexes | None = None
        self._unbuilt: ConfigStore | None = None  # indexes left to build from this store
        self._local = 0
        self._full = 0
        self._pending: dict[DataPath, Row | None] | None = None
        self._rebuild: ConfigStore | None = None
        self._kept_nodes: dict[SchemaPath, frozenset[str]] = {}

    def stats(self) -> ValidationStats:
        """Counts so far."""
        return ValidationStats(self._local, self._full)

    @property
    def plan(self) -> Plan:
        """The units of the schema (what an edit may touch and be checked locally)."""
        if self._plan is None:
            self._plan = plan(self.ctx)
        return self._plan

    @property
    def _indexes(self) -> Indexes:
        if self._built is None:
            self._built = Indexes(self.ctx, self.plan.units)
        return self._built

    @property
    def built(self) -> bool:
        """Whether the indexes exist (else the first transaction that changes what they keep
        builds them)."""
        return self._unbuilt is None

    @property
    def indexes(self) -> Indexes:
        """The indexes of running (built here if :meth:`rebuild` left them to be built)."""
        self.ready()
        return self._indexes

    def rebuild(self, store: ConfigStore) -> None:
        """Index every unit entry of the tree, lazily: at the next :meth:`ready` (a start-up
        serves reads without waiting for indexes only edits need)."""
        self._unbuilt = store

    def ready(self) -> None:
        """Build the indexes :meth:`rebuild` left, on the tree as committed (a transaction
        that needs them raises :class:`IndexesNeededError` first)."""
        if self._unbuilt is not None:
            store, self._unbuilt = self._unbuilt, None
            self._indexes.rebuild(store.first[0])

    def prepared(self, store: ConfigStore) -> object:
        """New indexes of every unit entry of ``store``'s tree."""
        indexes = Indexes(self.ctx, self.plan.units)
        indexes.rebuild(store.first[0])
        return indexes

    def install(self, prepared: object) -> None:
        """Make indexes :meth:`prepared` made the current ones."""
        assert isinstance(prepared, Indexes)
        if self._built is not None and self._built is not prepared:
            self._built.close()
        self._built, self._unbuilt = prepared, None
        self._full += 1

    def touched(self, applied: Sequence[Applied]) -> list[Touched] | None:
        """The unit instances a transaction touched; None when any change lies elsewhere."""
        found: dict[DataPath, Touched] = {}
        for record in applied:
            if record.path == datapath.ROOT:
                return None
            parts = datapath.steps(record.path)
            unit = self._unit_of(datapath.schema_path(record.path), len(parts))
            if unit is None or len(datapath.steps(record.created_from)) < unit.depth:
                return None  # outside every unit, or the edit created the unit's parents
            if unit.implicit and record.access is Access.DELETE and len(parts) == unit.depth:
                return None  # libyang re-creates it with its defaults: a whole-tree matter
            entry = datapath.join(parts[: unit.depth])
            found.setdefault(entry, Touched(unit, entry))
        return list(found.values()) if len(found) <= MAX_LOCAL_ENTRIES else None

    def _unit_of(self, shape: SchemaPath, length: int) -> Unit | None:
        return next(
            (
                u
                for u in self.plan.units.values()
                if length >= u.depth and datapath.is_within(shape, u.path)
            ),
            None,
        )

    def _case_conflict(self, store: ConfigStore, touched: list[Touched]) -> bool:
        """Whether another case of a choice above a touched unit has data (RFC 7950 7.9.2:
        libyang then drops it, which only a whole-tree validation does)."""
        for item in touched:
            if not item.unit.rivals:
                continue
            parent_path = datapath.parent(item.path)
            if parent_path == datapath.ROOT:
                first = store.first[0]
            else:
                parent = store.tree.find(parent_path)
                first = nodes.lib.lyd_child(parent) if parent is not None else nodes.ffi.NULL
            if any(nodes.native.has_instance(first, rival) for rival in item.unit.rivals):
                return True
        return False

    def check(self, store: ConfigStore, applied: Sequence[Applied]) -> None:
        """Validate locally when every change is in unit entries, else in full."""
        touched = self.touched(applied)
        if touched is not None and self._case_conflict(store, touched):
            touched = None
        if touched is None:
            self._full += 1
            validate_full(store)
            self._pending = {}
            self._rebuild = store if self._broad(applied) else None
            if self._rebuild is None and self._unbuilt is None:  # else built once committed
                self._pending = self._reindex(store, applied)
            return
        self._local += 1
        neutral = self._neutral(store, applied)
        mini = nodes.ffi.new("struct lyd_node **", nodes.ffi.NULL)
        try:
            self._copy(store, touched, mini)
            try:
                nodes.validate_all(self.ctx, mini, present=True)
            except CatsError as exc:
                raise DatastoreError(*exc.items) from exc
            rows: dict[DataPath, Row | None] = {}
            if not neutral:  # else nothing the indexes keep changed: they need not exist
                if self._unbuilt is not None:
                    raise IndexesNeededError
                rows = {
                    t.path: self.indexes.row(t.unit, nodes.find(self.ctx, mini[0], t.path))
                    for t in touched
                }
                self.indexes.check(rows)
            self._swap(store, touched, mini)
            self._pending = rows
        finally:
            nodes.free_all(mini[0])

    def _neutral(self, store: ConfigStore, applied: Sequence[Applied]) -> bool:
        """Whether a transaction of unit entries leaves every index as it was: it creates or
        deletes no entry and changes no node the indexes read (a member of a ``unique``, a
        tracked leafref) nor one above such a node in its entry. Such a transaction (a
        weight, a name changed; an entry replaced with the same unique and leafref values)
        is checked without the indexes, so a server whose edits are all of that kind never
        builds them (docs/notes/performance-round-2.md, "Memory")."""
        for record in applied:
            shape, depth = datapath.schema_path(record.path), len(datapath.steps(record.path))
            unit = self._unit_of(shape, depth)
            if unit is None or (record.access is not Access.UPDATE and depth <= unit.depth):
                return False  # an entry created or deleted: counts and references change
            if depth > unit.depth:
                relative = shape[len(unit.path) + 1 :]
                if any(k == relative or k.startswith(relative + "/") for k in self._kept(unit)):
                    return False
            elif record.old is None or not self._same_kept(unit, record.old, store, record.path):
                return False
        return True

    def _same_kept(self, unit: Unit, old: Any, store: ConfigStore, path: DataPath) -> bool:
        """Whether an updated entry holds the values the indexes read that it held before."""
        new = store.tree.find(path)
        return new is not None and all(
            _values(old, kept) == _values(new, kept) for kept in self._kept(unit)
        )

    def _kept(self, unit: Unit) -> frozenset[str]:
        """The nodes of a unit entry the indexes read, relative to the entry (not its keys:
        an update never changes them)."""
        kept = self._kept_nodes.get(unit.path)
        if kept is None:
            names = {leaf for spec in unit.uniques for leaf in spec}
            names.update(ref.leaf for ref in unit.out_refs if ref.leaf)
            kept = self._kept_nodes[unit.path] = frozenset(names)
        return kept

    def _broad(self, applied: Sequence[Applied]) -> bool:
        """Whether a change may hold many unit entries (the root or above a unit)."""
        for record in applied:
            shape = datapath.schema_path(record.path)
            if any(datapath.is_within(u.path, shape) for u in self.plan.units.values()):
                return True
            if any(datapath.is_within(shape, scope) for scope in self.plan.choice_scopes):
                return True  # libyang may have dropped a unit's case
        return False

    def _reindex(
        self, store: ConfigStore, applied: Sequence[Applied]
    ) -> dict[DataPath, Row | None]:
        rows: dict[DataPath, Row | None] = {}
        for record in applied:
            parts = datapath.steps(record.path)
            shape = datapath.schema_path(record.path)
            for unit in self.plan.units.values():
                if len(parts) >= unit.depth and datapath.is_within(shape, unit.path):
                    entry = datapath.join(parts[: unit.depth])
                    node = store.tree.find(entry)
                    rows[entry] = self.indexes.row(unit, node)
        return rows

    def _copy(self, store: ConfigStore, touched: list[Touched], mini: Any) -> None:
        """Copy the touched entries and what their leafrefs reach into the small tree."""
        for item in touched:
            node = store.tree.find(item.path)
            if node is None:
                parent = datapath.parent(item.path)
                if item.unit.subtree and parent != datapath.ROOT:
                    self._merge(mini, nodes.new_path(self.ctx, None, parent))  # for its defaults
                continue
            self._merge(mini, nodes.dup(node, with_parents=True))
            for target, carry in self._indexes.targets(item.unit, node):  # needs no index
                found = store.tree.find(target)
                if found is not None:
                    copy = nodes.dup(found, recursive=False, with_parents=True)
                    for name in carry:  # mandatory leaves the copy would be refused without
                        leaf = nodes.find(self.ctx, found, name)
                        if leaf is not None:
                            nodes.link(copy, None, nodes.dup(leaf))
                    self._merge(mini, copy)

    def _merge(self, mini: Any, copy: Any) -> None:
        if nodes.lib.lyd_merge_tree(mini, nodes.top_of(copy), nodes.lib.LYD_MERGE_DESTRUCT):
            raise nodes.fail(self.ctx)

    def _swap(self, store: ConfigStore, touched: list[Touched], mini: Any) -> None:
        """Replace each touched entry by its validated copy (which has its defaults)."""
        for item in touched:
            real = store.tree.find(item.path)
            copy = nodes.find(self.ctx, mini[0], item.path)
            if copy is None:
                continue
            if real is None:  # a deleted subtree libyang re-created with its defaults
                parent = store.tree.find(datapath.parent(item.path))
                if parent is not None:
                    nodes.unlink(mini, copy)
                    store.tree.link(parent, copy)
                continue
            nodes.unlink(mini, copy)
            if nodes.is_user_ordered(real):
                store.tree.move_before(real, copy)  # keeps the entry's position
                store.tree.free(real)
            elif nodes.in_place(real, copy):
                # in place: relinked, an ordered-by system entry would go to its list's end, and
                # undoing the edit would take out every instance after it to put it back
                nodes.take_content(real, copy)
            else:
                parent = nodes.parent_of(real)
                store.tree.free(real)
                store.tree.link(parent, copy)

    def settle(self, *, committed: bool) -> None:
        """Apply the overlay to the indexes (or drop it)."""
        if committed and self._rebuild is not None:
            self._unbuilt = self._rebuild  # built when the next transaction needs them
        elif committed and self._pending:
            self.indexes.apply(self._pending)
        self._pending = None
        self._rebuild = None


def _values(node: Any, relative: str) -> list[str]:
    """The values of the nodes at a relative schema path below an entry node."""
    return [nodes.value_of(found) for found in descendants(node, relative)]
