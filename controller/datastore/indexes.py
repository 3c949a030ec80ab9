"""Indexes of unit entries: ``unique`` tables, reference counts and entry counts.

They answer in O(1) the constraints that cross an entry's boundary (RFC 7950 7.8.3 unique,
7.7.5/7.7.6 min/max-elements, 9.9 require-instance of a leafref into a deleted entry), which
``lyd_find_xpath`` could only answer with a scan (52 ms at 100k entries). Checks run on the
state after a whole transaction: swapping two unique values in one edit is valid.

Memory (100k entries): what is kept of each entry (its unique values, the entries its
leafrefs point at as the number of a shared set) lives in an in-memory SQLite database
(:mod:`.entrystore`), a few tens of bytes an entry; references are counted per target, not
listed, so a refused delete of a referenced entry finds one referrer to name by a scan of the
rows (tens of milliseconds, on that refusal only). The rows of a transaction being checked
are Python objects (:class:`Row`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.datastore.entrystore import EntryStore, Kept, release_freed_memory
from controller.datastore.errors import DatastoreError
from controller.datastore.plan import OutRef, Unit
from controller.errors import ErrorItem, ErrorType
from controller.model import nodes
from controller.model.schema import NON_UNIQUE
from controller.types import DataPath, SchemaPath

RefKey = tuple[SchemaPath, str]  # (the referenced list, key value)


def predicate(name: str, value: str) -> str:
    """An XPath key predicate, quoted for the value."""
    return f"[{name}='{value}']" if "'" not in value else f'[{name}="{value}"]'


@dataclass(frozen=True, slots=True)
class Row:
    """What the indexes keep of one entry."""

    unit: SchemaPath
    key: str  # the single key's value ("" for multi-key lists, never referenced)
    uniques: tuple[tuple[str, ...] | None, ...]  # None when a leaf of the constraint is absent
    refs: tuple[RefKey, ...]  # the entries its tracked leafrefs point at (one per leaf)


def _error(
    tag: str, app_tag: str, message: str, path: str, info: Iterable[tuple[str, str]] = ()
) -> ErrorItem:
    return ErrorItem(ErrorType.APPLICATION, tag, message, path, app_tag, tuple(info))


def descendants(node: Any, relative: str) -> list[Any]:
    """The nodes at a relative schema path below ``node`` (``link/pool``: every instance).

    Not ``lyd_find_xpath``: it first walks to the first top-level sibling of ``node``'s tree,
    a scan of the top-level siblings when ``node`` is a top-level entry.
    """
    found = [node]
    for step in relative.split("/"):
        module, _, name = step.rpartition(":")
        found = [
            child
            for parent in found
            for child in nodes.children(parent)
            if nodes.name_of(child) == name
            and (not module or nodes.ffi.string(child.schema.module.name).decode() == module)
        ]
    return found


class Indexes:
    """The indexes of every unit of a plan."""

    def __init__(self, ctx: Any, units: Mapping[SchemaPath, Unit]) -> None:
        self.ctx = ctx
        self.units = dict(units)
        self._store = EntryStore(list(self.units))
        self.refs: Counter[RefKey] = Counter()  # how many leafrefs point at each entry
        self.counts: Counter[SchemaPath] = Counter()
        self._ref_keys: dict[RefKey, RefKey] = {}
        self._set_numbers: dict[tuple[RefKey, ...], int] = {}  # stored as these numbers
        self._sets: list[tuple[RefKey, ...]] = []  # one shared tuple per distinct set
        self._clear()

    def close(self) -> None:
        """Free the stored rows (the indexes are not used after)."""
        self._store.close()

    def _clear(self) -> None:
        self._store.clear()
        self.refs.clear()
        self._ref_keys.clear()
        self._set_numbers.clear()
        self._sets.clear()
        self.counts.clear()

    def _set_number(self, refs: tuple[RefKey, ...]) -> int:
        number = self._set_numbers.get(refs)
        if number is None:
            number = self._set_numbers[refs] = len(self._sets)
            self._sets.append(refs)
        return number

    def _before(self, entry: DataPath) -> Row | None:
        """The row of ``entry`` as the indexes keep it (without its unique values, which
        only the store's owners hold)."""
        stored = self._store.get(entry)
        if stored is None:
            return None
        return Row(stored.unit, stored.key, (), self._sets[stored.refs])

    def _interned(self, target: SchemaPath, value: str) -> RefKey:
        """One object per referenced entry, however many entries point at it (memory)."""
        key = (target, value)
        return self._ref_keys.setdefault(key, key)

    def _value(self, node: Any, relative: str) -> str | None:
        found = nodes.find(self.ctx, node, relative)
        return None if found is None else nodes.value_of(found)

    def row(self, unit: Unit, node: Any) -> Row | None:
        """The row of an entry node (None for no node: the entry is gone)."""
        if node is None:
            return None
        # the key is only looked up for entries leafrefs point at (a string less per entry)
        key = self._value(node, unit.keys[0]) if len(unit.keys) == 1 and unit.incoming else ""
        uniques: list[tuple[str, ...] | None] = []
        for spec in unit.uniques:
            values = [self._value(node, leaf) for leaf in spec]
            uniques.append(None if None in values else tuple(v or "" for v in values))
        refs = tuple(
            self._interned(ref.target_list, nodes.value_of(leaf))
            for ref in unit.out_refs
            if ref.target_list is not None
            for leaf in self._referrers(node, ref)
        )
        return Row(unit.path, key or "", tuple(uniques), self._sets[self._set_number(refs)])

    def targets(self, unit: Unit, node: Any) -> list[tuple[DataPath, tuple[str, ...]]]:
        """What an entry's tracked leafrefs point at: (data path, leaves to copy with it)."""
        paths: list[tuple[DataPath, tuple[str, ...]]] = []
        for ref in unit.out_refs:
            for leaf in self._referrers(node, ref):
                if ref.target_list is not None and ref.target_key is not None:
                    key = predicate(ref.target_key, nodes.value_of(leaf))
                    target = DataPath(ref.target_list + key)  # a unit has no list above
                    paths.append((target, self.units[ref.target_list].carry))
                elif ref.target_leaf is not None:
                    paths.append((ref.target_leaf, ()))
        return paths

    def _referrers(self, node: Any, ref: OutRef) -> list[Any]:
        """The instances of a tracked leafref inside one unit instance."""
        if not ref.leaf:
            return [node]
        if ref.multi:
            return descendants(node, ref.leaf)
        found = nodes.find(self.ctx, node, ref.leaf)
        return [] if found is None else [found]

    def check(self, rows: Mapping[DataPath, Row | None]) -> None:
        """Refuse a transaction whose result breaks unique, counts or references."""
        befores = {entry: self._before(entry) for entry in rows}  # one look-up each
        errors = (
            self._unique_errors(rows)
            + self._count_errors(rows, befores)
            + self._ref_errors(rows, befores)
        )
        if errors:
            raise DatastoreError(*errors)

    def _unique_errors(self, rows: Mapping[DataPath, Row | None]) -> list[ErrorItem]:
        errors: list[ErrorItem] = []
        claimed: dict[tuple[SchemaPath, int, tuple[str, ...]], DataPath] = {}
        for entry, row in rows.items():
            if row is None:
                continue
            unit = self.units[row.unit]
            for index, values in enumerate(row.uniques):
                if values is None:
                    continue
                owner = self._store.owner(row.unit, index, values)
                if owner is not None and (owner in rows or owner == entry):
                    owner = None  # that entry is being changed too: judged by its new row
                owner = owner or claimed.get((row.unit, index, values))
                claimed[(row.unit, index, values)] = entry
                if owner is not None and owner != entry:
                    spec = unit.uniques[index]
                    leaves = " ".join(spec)
                    message = (
                        f'Unique data leaf(s) "{leaves}" not satisfied in "{owner}" and "{entry}".'
                    )
                    info = [(NON_UNIQUE, f"{entry}/{leaf}") for leaf in spec]
                    errors.append(
                        _error("operation-failed", "data-not-unique", message, entry, info)
                    )
        return errors

    def _count_errors(
        self, rows: Mapping[DataPath, Row | None], befores: Mapping[DataPath, Row | None]
    ) -> list[ErrorItem]:
        delta: Counter[SchemaPath] = Counter()
        for entry, row in rows.items():
            before = befores[entry]
            if (before is None) != (row is None):
                unit = (row or before).unit  # type: ignore[union-attr]
                delta[unit] += 1 if row is not None else -1
        errors: list[ErrorItem] = []
        for path, change in delta.items():
            unit, count = self.units[path], self.counts[path] + change
            if count > unit.max_elements:
                errors.append(
                    _error("operation-failed", "too-many-elements", "Too many elements.", path)
                )
            if count < unit.min_elements:
                errors.append(
                    _error("operation-failed", "too-few-elements", "Too few elements.", path)
                )
        return errors

    def _ref_errors(
        self, rows: Mapping[DataPath, Row | None], befores: Mapping[DataPath, Row | None]
    ) -> list[ErrorItem]:
        errors: list[ErrorItem] = []
        for entry, row in rows.items():
            before = befores[entry]
            if row is not None or before is None or not self.units[before.unit].incoming:
                continue
            target = (before.unit, before.key)
            count = self.refs.get(target, 0)
            for other, other_row in rows.items():
                old = befores[other]
                count -= (old.refs if old else ()).count(target)
                count += (other_row.refs if other_row else ()).count(target)
            if count > 0:
                leaf = self._referrer(target, rows)
                message = f'Invalid leafref value "{before.key}" - its target {entry} is deleted.'
                errors.append(_error("data-missing", "instance-required", message, leaf))
        return errors

    def _referrer(self, target: RefKey, rows: Mapping[DataPath, Row | None]) -> str:
        """One leafref left pointing at ``target`` after the transaction ``rows``, for the
        refusal's path (the smallest entry path; the leaf itself unless it is one of several
        instances): a scan of the rows, on a refusal only."""
        changed = [(e, r.unit) for e, r in rows.items() if r is not None and target in r.refs]
        sets = [number for number, refs in enumerate(self._sets) if target in refs]
        kept = [(e, u) for e, u in self._store.with_refs(sets) if e not in rows]
        entry, path = min([*changed, *kept])
        unit = self.units[path]
        ref = next(ref for ref in unit.out_refs if ref.target_list == target[0])
        return entry if ref.multi or not ref.leaf else f"{entry}/{ref.leaf}"

    def apply(self, rows: Mapping[DataPath, Row | None]) -> None:
        """Make a checked transaction's rows current."""
        for entry in rows:
            self._forget(entry)
        self._keep((entry, row) for entry, row in rows.items() if row is not None)

    def _forget(self, entry: DataPath) -> None:
        stored = self._store.drop(entry)  # with the unique values it owns
        if stored is None:
            return
        self.counts[stored.unit] -= 1
        for ref in self._sets[stored.refs]:
            self.refs[ref] -= 1
            if self.refs[ref] <= 0:
                del self.refs[ref]

    def _keep(self, rows: Iterable[tuple[DataPath, Row]]) -> None:
        """Store entries' rows and count them and their references."""
        kept: list[Kept] = []
        for entry, row in rows:
            kept.append((entry, row.unit, row.key, self._set_number(row.refs), row.uniques))
            self.counts[row.unit] += 1
            for ref in row.refs:
                self.refs[ref] += 1
        self._store.keep(kept)

    def rebuild(self, first: Any) -> None:
        """Index every unit entry of a tree (at load and after a broad change)."""
        self._clear()
        self._keep(
            (nodes.path_of(node), row)
            for unit in self.units.values()
            for node in (nodes.find_all(self.ctx, first, unit.path) if first else ())
            if (row := self.row(unit, node)) is not None
        )
        release_freed_memory()  # the walk's garbage, returned to the system
