"""What validating a one-entry edit costs with libyang 2.1.30, by datastore size.

Run with ``python -m tools.bench.libyang_validation`` from the repository root. It loads
``tests/yang/bench-list@2026-11-30.yang``, builds datastores of 1k, 10k and 100k ``entry``
items (plus a few hundred ``target`` items they reference by leafref), and measures:

* strategies that validate a single-entry create, each also checked for correctness: it must
  accept a good entry and reject a dangling leafref, a duplicate ``unique`` value, a missing
  mandatory leaf and an out-of-range value, exactly as whole-tree validation does;
* the building blocks of a transaction path: parsing the edit, lookups, copying, merging,
  diffing and printing the tree.

Strategies:

``full``
    merge the edit into the datastore, then ``lyd_validate_all`` on the whole tree: what
    NETCONF servers built on libyang do, and O(datastore).
``module``
    the same with ``lyd_validate_module``; not in the CFFI cdefs of libyang-python 2.8.0, so
    it is called through :mod:`ctypes` on the same ``libyang.so.2``.
``parse-into-parent``
    ``lyd_parse_data`` with the datastore's container as parent and validation on: libyang
    validates the new nodes' values, then runs its final checks over the whole tree.
``entry-local``
    ``lyd_validate_all`` on a small tree holding only the new entry and copies of the nodes its
    leafrefs point at, plus checks the datastore answers from indexes it builds from the
    compiled schema: key existence (libyang's hash lookup), ``unique`` (value -> key dict) and
    leafrefs pointing at the edited data (reference counts).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import libyang
from _libyang import ffi, lib

MODULE = "bench-list"
YANG_DIR = Path(__file__).resolve().parents[2] / "tests" / "yang"
BENCH_PATH = "/bench-list:bench"
ENTRY_PATH = f"{BENCH_PATH}/entry"
SIZES = (1_000, 10_000, 100_000)
TARGETS = 300
WEIGHT_MAX = 1000
NEW_ID_BASE = 10_000_000
BUDGET_S = 1.0  # time spent per measured cell, at least MIN_ITERS iterations
MIN_ITERS = 3
MAX_ITERS = 400
TARGET_RATE = 200.0  # validated single-entry edits per second at the largest size
PERCENT = 100
PATH_BUF = 1024

VAL_OPTS = lib.LYD_VALIDATE_PRESENT | lib.LYD_VALIDATE_NO_STATE
EDIT_PARSE_OPTS = lib.LYD_PARSE_ONLY | lib.LYD_PARSE_STRICT
DUP_WITH_PARENTS = lib.LYD_DUP_RECURSIVE | lib.LYD_DUP_WITH_PARENTS


# ----------------------------------------------------------------------------- test data


@dataclass(frozen=True)
class Entry:
    """One ``entry`` list item; ``name`` None leaves the mandatory leaf out."""

    key: int
    name: str | None
    addr: str
    target: str
    weight: int

    def as_json(self) -> dict[str, object]:
        """The RFC 7951 JSON object of the entry."""
        item: dict[str, object] = {"id": self.key}
        if self.name is not None:
            item["name"] = self.name
        item.update(addr=self.addr, target=self.target, weight=self.weight)
        return item


def addr_of(index: int) -> str:
    """The unique address of existing entry ``index``."""
    return f"10.{index >> 16}.{(index >> 8) & 255}.{index & 255}"


def existing_entry(index: int) -> Entry:
    """Entry ``index`` of the initial datastore."""
    return Entry(index, f"e{index}", addr_of(index), f"t{index % TARGETS}", 1 + index % WEIGHT_MAX)


def new_entry(serial: int) -> Entry:
    """A valid entry that is not in the datastore yet."""
    return Entry(
        NEW_ID_BASE + serial,
        f"new{serial}",
        f"new-{serial}",
        f"t{serial % TARGETS}",
        1 + serial % WEIGHT_MAX,
    )


def datastore_json(size: int) -> str:
    """The whole datastore: TARGETS targets and ``size`` entries."""
    return json.dumps(
        {
            f"{MODULE}:bench": {
                "target": [{"name": f"t{i}"} for i in range(TARGETS)],
                "entry": [existing_entry(i).as_json() for i in range(size)],
            }
        }
    )


def edit_json(entry: Entry) -> str:
    """A one-entry edit as a top-level document."""
    return json.dumps({f"{MODULE}:bench": {"entry": [entry.as_json()]}})


def edit_child_json(entry: Entry) -> str:
    """A one-entry edit as the content of ``/bench-list:bench`` (for a parse with parent)."""
    return json.dumps({f"{MODULE}:entry": [entry.as_json()]})


def key_predicate(name: str, value: str) -> str:
    """An XPath key predicate, quoted for the value."""
    return f"[{name}='{value}']" if "'" not in value else f'[{name}="{value}"]'


# ----------------------------------------------------------------------------- libyang helpers


class Libyang:
    """The context and the few raw libyang calls the benchmark needs."""

    def __init__(self) -> None:
        self.ctx = libyang.Context(str(YANG_DIR))
        self.ctx.load_module(MODULE)
        self.c = self.ctx.cdata
        self.last_error = ""

    def take_errors(self) -> str:
        """Collect and clear libyang's stored errors."""
        messages: list[str] = []
        err = lib.ly_err_first(self.c)
        while err:
            if err.msg:
                messages.append(ffi.string(err.msg).decode())
            err = err.next
        lib.ly_err_clean(self.c, ffi.NULL)
        self.last_error = "; ".join(messages)
        return self.last_error

    def parse(self, text: str, parse_opts: int, val_opts: int) -> Any | None:
        """Parse a top-level JSON document; None (and ``last_error``) when libyang refuses it."""
        out = ffi.new("struct lyd_node **")
        rc = lib.lyd_parse_data_mem(self.c, text.encode(), lib.LYD_JSON, parse_opts, val_opts, out)
        if rc != lib.LY_SUCCESS:
            self.take_errors()
            if out[0]:
                lib.lyd_free_all(out[0])
            return None
        return out[0]

    def find(self, tree: Any, path: str) -> Any | None:
        """``lyd_find_path``: libyang resolves key predicates through its child hash tables."""
        out = ffi.new("struct lyd_node **")
        if lib.lyd_find_path(tree, path.encode(), 0, out) != lib.LY_SUCCESS:
            lib.ly_err_clean(self.c, ffi.NULL)
            return None
        return out[0]

    def validate_all(self, tree_p: Any) -> bool:
        """``lyd_validate_all`` on the tree ``tree_p`` points at."""
        if lib.lyd_validate_all(tree_p, self.c, VAL_OPTS, ffi.NULL) != lib.LY_SUCCESS:
            self.take_errors()
            return False
        return True

    def module_validator(self) -> Callable[[Any], bool]:
        """``lyd_validate_module``, absent from the CFFI cdefs, called through ctypes."""
        so = ctypes.CDLL("libyang.so.2")
        func = so.lyd_validate_module
        func.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p]
        func.restype = ctypes.c_int
        module = int(ffi.cast("uintptr_t", lib.ly_ctx_get_module_latest(self.c, MODULE.encode())))

        def validate(tree_p: Any) -> bool:
            rc = func(int(ffi.cast("uintptr_t", tree_p)), module, 0, None)
            if rc != lib.LY_SUCCESS:
                self.take_errors()
                return False
            return True

        return validate


def children(node: Any) -> Iterator[Any]:
    """The children of a data node."""
    child = lib.lyd_child(node)
    while child:
        yield child
        child = child.next


def leaf_values(node: Any) -> dict[str, str]:
    """Canonical values of the terminal children of a list instance, by name."""
    values: dict[str, str] = {}
    for child in children(node):
        if child.schema.nodetype & (lib.LYS_LEAF | lib.LYS_LEAFLIST):
            values[ffi.string(child.schema.name).decode()] = ffi.string(
                lib.lyd_get_value(child)
            ).decode()
    return values


def ly_array(array: Any) -> Iterator[Any]:
    """Items of a libyang sized array (the count is stored just before the first item)."""
    if array == ffi.NULL:
        return
    count = int(ffi.cast("uint64_t *", array)[-1])
    for index in range(count):
        yield array[index]


def top_of(node: Any) -> Any:
    """The top-level ancestor of a data node."""
    while node.parent:
        node = ffi.cast("struct lyd_node *", node.parent)
    return node


class Store:
    """The running datastore: one tree, edited in place."""

    def __init__(self, ly: Libyang, size: int) -> None:
        self.ly = ly
        self.size = size
        self.root = ffi.new("struct lyd_node **")
        started = time.perf_counter()
        tree = ly.parse(datastore_json(size), lib.LYD_PARSE_STRICT, VAL_OPTS)
        if tree is None:
            raise RuntimeError(f"cannot load the datastore: {ly.last_error}")
        self.load_s = time.perf_counter() - started
        self.root[0] = tree

    @property
    def bench(self) -> Any:
        """The ``/bench-list:bench`` container."""
        return self.root[0]

    def remove_entry(self, key: int) -> None:
        """Remove the ``entry`` keyed ``key`` (undo of a create, or cleanup after a refusal)."""
        self.remove(entry_path(key))

    def remove(self, path: str) -> None:
        """Free the node at ``path`` if it exists."""
        node = self.ly.find(self.root[0], path)
        if node is not None:
            lib.lyd_free_tree(node)

    def close(self) -> None:
        """Free the tree."""
        lib.lyd_free_all(self.root[0])


def entry_path(key: int) -> str:
    """Data path of an entry."""
    return f"{ENTRY_PATH}{key_predicate('id', str(key))}"


# ----------------------------------------------------------------------------- strategies


class Strategy(Protocol):
    """A way to validate and apply a one-entry create."""

    name: str

    def create(self, entry: Entry) -> bool:
        """Apply the entry if the result is valid; leave the datastore unchanged if not."""

    def undo_create(self, key: int) -> None:
        """Remove an entry that :meth:`create` accepted."""

    def probe_delete_target(self, name: str) -> bool | None:
        """Whether deleting ``target[name]`` would be valid (None: not supported)."""


class InPlaceStrategy:
    """A strategy that writes into the datastore itself: undoing a create removes the entry."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def undo_create(self, key: int) -> None:
        self.store.remove_entry(key)


class FullValidation(InPlaceStrategy):
    """Merge the edit into the datastore and validate the whole tree (or module)."""

    def __init__(self, store: Store, name: str, validate: Callable[[Any], bool]) -> None:
        super().__init__(store)
        self.name = name
        self.validate = validate

    def create(self, entry: Entry) -> bool:
        edit = self.store.ly.parse(edit_json(entry), EDIT_PARSE_OPTS, 0)
        if edit is None:
            return False
        if lib.lyd_merge_tree(self.store.root, edit, lib.LYD_MERGE_DESTRUCT) != lib.LY_SUCCESS:
            self.store.ly.take_errors()
            return False
        if not self.validate(self.store.root):
            self.store.remove_entry(entry.key)
            return False
        return True

    def probe_delete_target(self, name: str) -> bool | None:
        path = f"{BENCH_PATH}/target{key_predicate('name', name)}"
        node = self.store.ly.find(self.store.root[0], path)
        if node is None:
            return None
        saved = ffi.new("struct lyd_node **")
        lib.lyd_dup_single(node, ffi.NULL, lib.LYD_DUP_RECURSIVE, saved)
        lib.lyd_free_tree(node)
        valid = self.validate(self.store.root)
        lib.lyd_insert_child(self.store.bench, saved[0])
        return valid


class ParseIntoParent(InPlaceStrategy):
    """``lyd_parse_data`` under the datastore's container, with libyang's own validation."""

    name = "parse-into-parent"

    def create(self, entry: Entry) -> bool:
        ly = self.store.ly
        text = ffi.new("char[]", edit_child_json(entry).encode())
        data_in = ffi.new("struct ly_in **")
        lib.ly_in_new_memory(text, data_in)
        out = ffi.new("struct lyd_node **")
        rc = lib.lyd_parse_data(
            ly.c, self.store.bench, data_in[0], lib.LYD_JSON, lib.LYD_PARSE_STRICT, VAL_OPTS, out
        )
        lib.ly_in_free(data_in[0], 0)
        if rc != lib.LY_SUCCESS:
            ly.take_errors()
            # On failure the parsed entry stays linked into the datastore: remove it.
            self.store.remove_entry(entry.key)
            return False
        return True

    def probe_delete_target(self, name: str) -> bool | None:
        return None


@dataclass(frozen=True)
class LeafrefSpec:
    """A leafref leaf of the list whose target is a key of a top-level-reachable list."""

    leaf: str
    require_instance: bool
    target_list: str  # data path of the referenced list
    target_key: str

    def target_path(self, value: str) -> str:
        """Data path of the instance a value refers to."""
        return f"{self.target_list}{key_predicate(self.target_key, value)}"


@dataclass
class ListIndex:
    """What the datastore keeps per list, found from the compiled schema."""

    schema: Any
    keys: tuple[str, ...]
    uniques: tuple[tuple[str, ...], ...]
    leafrefs: tuple[LeafrefSpec, ...]
    unique_tables: list[dict[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    # references held by list items, by (target list path, value): reverse leafref check
    refs: Counter[tuple[str, str]] = field(default_factory=Counter)
    rows: dict[tuple[str, ...], dict[str, str]] = field(default_factory=dict)

    def add(self, values: dict[str, str]) -> None:
        """Index one list item."""
        key = tuple(values[name] for name in self.keys)
        self.rows[key] = values
        for spec, table in zip(self.uniques, self.unique_tables, strict=True):
            combo = tuple(values.get(path, "") for path in spec)
            if all(path in values for path in spec):
                table[combo] = key
        for ref in self.leafrefs:
            if ref.leaf in values:
                self.refs[ref.target_list, values[ref.leaf]] += 1

    def remove(self, key: tuple[str, ...]) -> None:
        """Forget one list item."""
        values = self.rows.pop(key)
        for spec, table in zip(self.uniques, self.unique_tables, strict=True):
            if all(path in values for path in spec):
                table.pop(tuple(values[path] for path in spec), None)
        for ref in self.leafrefs:
            if ref.leaf in values:
                self.refs[ref.target_list, values[ref.leaf]] -= 1

    def unique_clash(self, values: dict[str, str]) -> str | None:
        """The first unique constraint another item already satisfies with the same values."""
        key = tuple(values[name] for name in self.keys)
        for spec, table in zip(self.uniques, self.unique_tables, strict=True):
            if not all(path in values for path in spec):
                continue  # RFC 7950 7.8.3: unique applies only when all its leaves exist
            owner = table.get(tuple(values[path] for path in spec))
            if owner is not None and owner != key:
                return f"unique {' '.join(spec)} also held by {owner}"
        return None


def relative_path(node: Any, ancestor: Any) -> str:
    """Schema path of ``node`` below ``ancestor``, as in a ``unique`` argument."""
    names: list[str] = []
    node = ffi.cast("struct lysc_node *", node)
    while node != ancestor:
        names.append(ffi.string(node.name).decode())
        node = node.parent
    return "/".join(reversed(names))


def leafref_spec(ly: Libyang, leaf: Any) -> LeafrefSpec | None:
    """How to find the instance a leafref leaf points at, if it is a list key."""
    ltype = ffi.cast("struct lysc_node_leaf *", leaf).type
    if ltype.basetype != lib.LY_TYPE_LEAFREF:
        return None
    lref = ffi.cast("struct lysc_type_leafref *", ltype)
    path = ffi.string(lib.lyxp_get_expr(lref.path))
    found = ffi.new("struct ly_set **")
    if lib.lys_find_xpath(ly.c, leaf, path, 0, found) != lib.LY_SUCCESS:
        raise RuntimeError(f"cannot resolve leafref path {path!r}: {ly.take_errors()}")
    target = found[0].snodes[0]
    lib.ly_set_free(found[0], ffi.NULL)
    if not (target.flags & lib.LYS_KEY):
        raise NotImplementedError("leafref to a non-key leaf: keep a value index instead")
    buf = ffi.new("char[]", PATH_BUF)
    lib.lysc_path(target.parent, lib.LYSC_PATH_DATA, buf, PATH_BUF)
    return LeafrefSpec(
        ffi.string(leaf.name).decode(),
        bool(lref.require_instance),
        ffi.string(buf).decode(),
        ffi.string(target.name).decode(),
    )


def list_index(ly: Libyang, list_path: str) -> ListIndex:
    """Keys, unique constraints and leafrefs of a list, read from the compiled schema."""
    snode = lib.lys_find_path(ly.c, ffi.NULL, list_path.encode(), 0)
    compiled = ffi.cast("struct lysc_node_list *", snode)
    uniques = tuple(
        tuple(relative_path(leaf, snode) for leaf in ly_array(unique))
        for unique in ly_array(compiled.uniques)
    )
    keys: list[str] = []
    leafrefs: list[LeafrefSpec] = []
    child = lib.lysc_node_child(snode)
    while child:
        if child.flags & lib.LYS_KEY:
            keys.append(ffi.string(child.name).decode())
        elif child.nodetype == lib.LYS_LEAF:
            spec = leafref_spec(ly, child)
            if spec is not None:
                leafrefs.append(spec)
        child = child.next
    index = ListIndex(snode, tuple(keys), uniques, tuple(leafrefs))
    index.unique_tables = [{} for _ in uniques]
    return index


class EntryLocal:
    """Validate only the edited entry (plus copies of what it references) and use indexes."""

    name = "entry-local + indexes"

    def __init__(self, store: Store) -> None:
        self.store = store
        self.ly = store.ly
        started = time.perf_counter()
        self.index = list_index(self.ly, ENTRY_PATH)
        for node in children(store.bench):
            if node.schema == self.index.schema:
                self.index.add(leaf_values(node))
        self.build_s = time.perf_counter() - started

    def _reject(self, mini: Any, reason: str) -> bool:
        self.ly.last_error = reason or self.ly.last_error
        lib.lyd_free_all(mini[0])
        return False

    def _copy_referenced(self, mini: Any, values: dict[str, str]) -> None:
        """Copy into the small tree the instances the entry's leafrefs point at."""
        for ref in self.index.leafrefs:
            value = values.get(ref.leaf)
            if value is None or not ref.require_instance:
                continue
            target = self.ly.find(self.store.root[0], ref.target_path(value))
            if target is None:
                continue  # left out: lyd_validate_all below reports the dangling leafref
            dup = ffi.new("struct lyd_node **")
            lib.lyd_dup_single(target, ffi.NULL, DUP_WITH_PARENTS, dup)
            lib.lyd_merge_tree(mini, top_of(dup[0]), lib.LYD_MERGE_DESTRUCT)

    def _entry_of(self, mini: Any) -> Any | None:
        return next((n for n in children(mini[0]) if n.schema == self.index.schema), None)

    def create(self, entry: Entry) -> bool:
        if self.ly.find(self.store.root[0], entry_path(entry.key)) is not None:
            return False  # create of an existing key: data-exists
        edit = self.ly.parse(edit_json(entry), EDIT_PARSE_OPTS, 0)
        if edit is None:
            return False  # syntax, unknown node, type or range error
        mini = ffi.new("struct lyd_node **", edit)
        node = self._entry_of(mini)
        self._copy_referenced(mini, leaf_values(node))
        if not self.ly.validate_all(mini):
            return self._reject(mini, "")
        node = self._entry_of(mini)  # validation may add defaults; re-read the values
        values = leaf_values(node)
        clash = self.index.unique_clash(values)
        if clash is not None:
            return self._reject(mini, clash)
        lib.lyd_insert_child(self.store.bench, node)  # moves the validated entry in place
        lib.lyd_free_all(mini[0])
        self.index.add(values)
        return True

    def undo_create(self, key: int) -> None:
        self.index.remove((str(key),))
        self.store.remove_entry(key)

    def probe_delete_target(self, name: str) -> bool | None:
        spec = next(ref for ref in self.index.leafrefs if ref.target_list.endswith("/target"))
        return self.index.refs[spec.target_list, name] == 0


# ----------------------------------------------------------------------------- measurement


@dataclass
class Row:
    """One measured cell."""

    operation: str
    size: int
    times: list[float]

    @property
    def rate(self) -> float:
        return len(self.times) / sum(self.times)

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.times)
        return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]

    def line(self) -> str:
        p50 = statistics.median(self.times) * 1000
        p99 = self.percentile(0.99) * 1000
        return (
            f"| {self.operation:<44} | {self.size:>7} | {len(self.times):>5} "
            f"| {self.rate:>10.1f} | {p50:>9.3f} | {p99:>9.3f} |"
        )


HEADER = (
    f"| {'operation':<44} | {'entries':>7} | {'iters':>5} | {'ops/s':>10} "
    f"| {'p50 ms':>9} | {'p99 ms':>9} |\n|{'-' * 46}|{'-' * 9}:|{'-' * 6}:|{'-' * 11}:"
    f"|{'-' * 10}:|{'-' * 10}:|"
)


def measure(
    operation: str, size: int, step: Callable[[int], float], budget: float, least: int = MIN_ITERS
) -> Row:
    """Run ``step(i)`` (which returns the seconds of its timed part) within a time budget."""
    times: list[float] = []
    started = time.perf_counter()
    while len(times) < MAX_ITERS and (len(times) < least or time.perf_counter() - started < budget):
        times.append(step(len(times)))
    return Row(operation, size, times)


def timed(action: Callable[[], object]) -> float:
    """Seconds one call takes."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


# The correctness cases: (label, entry factory, expected verdict).
CASES: tuple[tuple[str, Callable[[int], Entry], bool], ...] = (
    ("good", new_entry, True),
    ("dangling leafref", lambda s: Entry(NEW_ID_BASE + s, "x", f"d-{s}", "no-such", 5), False),
    ("duplicate unique addr", lambda s: Entry(NEW_ID_BASE + s, "x", addr_of(7), "t1", 5), False),
    ("missing mandatory name", lambda s: Entry(NEW_ID_BASE + s, None, f"m-{s}", "t1", 5), False),
    ("weight out of range", lambda s: Entry(NEW_ID_BASE + s, "x", f"r-{s}", "t1", 0), False),
)


def check_strategy(strategy: Strategy, serial: int) -> list[str]:
    """Verdicts of a strategy on every case: 'ok', or what went wrong."""
    verdicts: list[str] = []
    for label, make, expected in CASES:
        entry = make(serial)
        accepted = strategy.create(entry)
        if accepted:
            strategy.undo_create(entry.key)
        verdicts.append("ok" if accepted == expected else f"WRONG({label})")
    deletable = strategy.probe_delete_target("t0")  # t0 is referenced by entries 0, 300, ...
    verdicts.append("n/a" if deletable is None else ("ok" if not deletable else "WRONG(delete)"))
    return verdicts


def bench_strategy(strategy: Strategy, size: int, budget: float) -> Row:
    """Cost of one validated create (undo not timed)."""

    def step(i: int) -> float:
        entry = new_entry(i)
        started = time.perf_counter()
        accepted = strategy.create(entry)
        elapsed = time.perf_counter() - started
        if not accepted:
            raise RuntimeError(f"{strategy.name} refused a good edit: {strategy_error(strategy)}")
        strategy.undo_create(entry.key)
        return elapsed

    return measure(strategy.name, size, step, budget)


def strategy_error(strategy: Strategy) -> str:
    """libyang's last error for a strategy, if it keeps one."""
    store: Store | None = getattr(strategy, "store", None)
    return store.ly.last_error if store is not None else ""


def bench_components(store: Store, budget: float) -> list[Row]:
    """Costs of the building blocks of a transaction path."""
    ly, size = store.ly, store.size
    rows: list[Row] = []

    def parse_edit(i: int) -> float:
        text = edit_json(new_entry(i))
        out = ffi.new("struct lyd_node **")
        started = time.perf_counter()
        rc = lib.lyd_parse_data_mem(ly.c, text.encode(), lib.LYD_JSON, EDIT_PARSE_OPTS, 0, out)
        elapsed = time.perf_counter() - started
        if rc != lib.LY_SUCCESS:
            raise RuntimeError(f"edit refused: {ly.take_errors()}")
        lib.lyd_free_all(out[0])
        return elapsed

    def find_key(i: int) -> float:
        return timed(lambda: ly.find(store.root[0], entry_path((i * 7919) % size)))

    def find_unique_scan(i: int) -> float:
        path = f"{ENTRY_PATH}[addr='{addr_of((i * 7919) % size)}']"
        found = ffi.new("struct ly_set **")
        elapsed = timed(lambda: lib.lyd_find_xpath(store.root[0], path.encode(), found))
        lib.ly_set_free(found[0], ffi.NULL)
        return elapsed

    def merge_in_place(i: int) -> float:
        edit = ly.parse(edit_json(new_entry(i)), EDIT_PARSE_OPTS, 0)
        elapsed = timed(lambda: lib.lyd_merge_tree(store.root, edit, lib.LYD_MERGE_DESTRUCT))
        if ly.find(store.root[0], entry_path(new_entry(i).key)) is None:
            raise RuntimeError("merge did not apply the edit")
        store.remove_entry(new_entry(i).key)
        return elapsed

    def dup_entry(i: int) -> float:
        node = ly.find(store.root[0], entry_path((i * 7919) % size))
        out = ffi.new("struct lyd_node **")
        elapsed = timed(lambda: lib.lyd_dup_single(node, ffi.NULL, lib.LYD_DUP_RECURSIVE, out))
        lib.lyd_free_tree(out[0])
        return elapsed

    for name, step in (
        ("parse one-entry edit (LYD_PARSE_ONLY)", parse_edit),
        ("lyd_find_path entry[id=] (hash)", find_key),
        ("lyd_find_xpath entry[addr=] (scan)", find_unique_scan),
        ("lyd_merge_tree edit into tree in place", merge_in_place),
        ("lyd_dup_single one entry (undo record)", dup_entry),
    ):
        rows.append(measure(name, size, step, budget))
    rows.extend(bench_whole_tree(store, budget))
    return rows


def bench_whole_tree(store: Store, budget: float) -> list[Row]:
    """Operations whose cost is the whole tree: copy, diff, print."""
    ly, size = store.ly, store.size

    def dup_tree(_: int) -> float:
        out = ffi.new("struct lyd_node **")
        elapsed = timed(
            lambda: lib.lyd_dup_siblings(store.root[0], ffi.NULL, lib.LYD_DUP_RECURSIVE, out)
        )
        lib.lyd_free_all(out[0])
        return elapsed

    copy = ffi.new("struct lyd_node **")
    lib.lyd_dup_siblings(store.root[0], ffi.NULL, lib.LYD_DUP_RECURSIVE, copy)
    lib.lyd_merge_tree(
        copy, ly.parse(edit_json(new_entry(0)), EDIT_PARSE_OPTS, 0), lib.LYD_MERGE_DESTRUCT
    )

    def diff(_: int) -> float:
        out = ffi.new("struct lyd_node **")
        elapsed = timed(lambda: lib.lyd_diff_siblings(store.root[0], copy[0], 0, out))
        lib.lyd_free_all(out[0])
        return elapsed

    def print_json(_: int) -> float:
        out = ffi.new("char **")
        elapsed = timed(
            lambda: lib.lyd_print_mem(out, store.root[0], lib.LYD_JSON, lib.LYD_PRINT_WITHSIBLINGS)
        )
        lib.free(out[0])
        return elapsed

    rows = [
        measure("lyd_dup_siblings whole tree (copy)", size, dup_tree, budget),
        # lyd_diff_siblings grows quadratically (about 12 s at 100k): one run is enough there.
        measure("lyd_diff_siblings tree vs copy+1 entry", size, diff, budget, least=1),
        measure("lyd_print_mem whole tree, JSON", size, print_json, budget),
    ]
    lib.lyd_free_all(copy[0])
    return rows


def strategies_for(store: Store) -> list[Strategy]:
    """Every strategy, on the same datastore."""
    ly = store.ly
    return [
        FullValidation(store, "full: merge + lyd_validate_all", ly.validate_all),
        FullValidation(store, "module: merge + lyd_validate_module", ly.module_validator()),
        ParseIntoParent(store),
        EntryLocal(store),
    ]


@dataclass
class Report:
    """Everything measured."""

    strategy_rows: list[Row] = field(default_factory=list)
    component_rows: list[Row] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def cross_check(local: EntryLocal, count: int = 5) -> str:
    """Whole-tree validation of the datastore after entry-local creates moved nodes into it."""
    accepted = [new_entry(i) for i in range(count) if local.create(new_entry(i))]
    valid = local.ly.validate_all(local.store.root)
    for entry in accepted:
        local.undo_create(entry.key)
    return (
        f"{local.store.size} entries: lyd_validate_all after {len(accepted)} entry-local creates: "
        + ("valid" if valid else f"INVALID ({local.ly.last_error})")
    )


def run_size(ly: Libyang, size: int, budget: float, report: Report) -> None:
    """Build one datastore and measure everything on it."""
    store = Store(ly, size)
    try:
        strategies = strategies_for(store)
        local = strategies[-1]
        if isinstance(local, EntryLocal):
            report.notes.append(
                f"{size} entries: load (parse + validate) {store.load_s:.2f} s, "
                f"entry-local index build {local.build_s:.2f} s"
            )
            report.notes.append(cross_check(local))
        for strategy in strategies:
            verdicts = check_strategy(strategy, size)
            report.checks.append(f"| {strategy.name:<38} | {size:>7} | {' | '.join(verdicts)} |")
            report.strategy_rows.append(bench_strategy(strategy, size, budget))
        report.component_rows.extend(bench_components(store, budget))
    finally:
        store.close()


def verdict(rows: Sequence[Row], sizes: Sequence[int]) -> str:
    """Whether entry-local meets the target: TARGET_RATE at the largest size, >= half of 1k."""
    rates = {row.size: row.rate for row in rows if row.operation == EntryLocal.name}
    small, large = rates[min(sizes)], rates[max(sizes)]
    ok = large >= TARGET_RATE and large >= small / 2
    return (
        f"entry-local: {large:.0f} edits/s at {max(sizes)} entries, {small:.0f} at {min(sizes)} "
        f"({PERCENT * large / small:.0f}%): target {'MET' if ok else 'NOT MET'}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds per cell")
    args = parser.parse_args(argv)
    ly = Libyang()
    report = Report()
    for size in args.sizes:
        run_size(ly, size, args.budget, report)
    print(f"libyang.so.2 as installed, {TARGETS} targets; one validated create per op\n")
    print(HEADER)
    for row in sorted(report.strategy_rows, key=lambda r: (r.operation, r.size)):
        print(row.line())
    print("\nCorrectness (good, dangling leafref, duplicate unique, missing mandatory,")
    print("out-of-range, delete a referenced target):\n")
    for line in report.checks:
        print(line)
    print("\nBuilding blocks:\n")
    print(HEADER)
    for row in sorted(report.component_rows, key=lambda r: (r.operation, r.size)):
        print(row.line())
    print()
    for note in report.notes:
        print(note)
    print(verdict(report.strategy_rows, args.sizes))


if __name__ == "__main__":
    main()
