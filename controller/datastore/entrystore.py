"""What the indexes keep of each unit entry, in an in-memory SQLite database.

At 100k entries the indexes held about 380 bytes of Python objects an entry (the entry's path
as the key of its row, the row, its unique values and the dictionaries around them: 38 MiB
traced, 44 MiB of RSS once built). Here an entry costs a few tens of bytes of B-tree pages:
its path is stored as the unit's number and the part after the unit's path (the key
predicates), its unique values once each with the entry that owns them, and its references
as the number of an interned set (docs/notes/performance-round-2.md, "Memory"). A look-up is
a primary-key search (a few microseconds); the indexes make a handful per transaction.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from controller.datastore import datapath
from controller.types import DataPath, SchemaPath

_TABLES = """
CREATE TABLE entry (
    unit INTEGER NOT NULL, rest TEXT NOT NULL, key TEXT, refs INTEGER NOT NULL,
    PRIMARY KEY (unit, rest)
) WITHOUT ROWID;
CREATE TABLE uniq (
    unit INTEGER NOT NULL, spec INTEGER NOT NULL, value TEXT NOT NULL, rest TEXT NOT NULL,
    PRIMARY KEY (unit, spec, value)
) WITHOUT ROWID;
CREATE INDEX uniq_owner ON uniq (unit, rest);
"""


@dataclass(frozen=True, slots=True)
class Stored:
    """What is kept of an indexed entry: its unit, its key (for entries leafrefs point at)
    and the number of the set of entries its leafrefs point at."""

    unit: SchemaPath
    key: str
    refs: int


Kept = tuple[DataPath, SchemaPath, str, int, Sequence[Sequence[str] | None]]
"""An entry as :meth:`EntryStore.keep` takes it: its path and unit, its key ("" when no
leafref points at its list), the number of its set of references, and the values of each
of its unit's unique constraints (None where a leaf of one is absent)."""


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc
        return None


def release_freed_memory() -> None:
    """Return the heap's free pages to the system (glibc's ``malloc_trim``; nothing where the
    C library has none): after a rebuild, whose walk of the tree leaves megabytes freed."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def unique_text(values: Sequence[str]) -> str:
    """The stored form of one unique constraint's values (one leaf: the value itself)."""
    return values[0] if len(values) == 1 else json.dumps(list(values))


class EntryStore:
    """Rows of unit entries and owners of unique values, by unit (the units' order fixed at
    creation)."""

    def __init__(self, units: Sequence[SchemaPath]) -> None:
        self._units = list(units)
        self._ids = {unit: number for number, unit in enumerate(self._units)}
        # one connection, used under the datastore's lock (never by two threads at once)
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._db.executescript(_TABLES)

    def close(self) -> None:
        """Free the database."""
        self._db.close()

    def clear(self) -> None:
        """Forget every entry."""
        self._db.execute("DELETE FROM entry")
        self._db.execute("DELETE FROM uniq")

    def _split(self, entry: DataPath, unit: SchemaPath) -> tuple[int, str]:
        """(unit number, the path after the unit's) of an entry of ``unit``."""
        return self._ids[unit], entry[len(unit) :] if entry.startswith(unit) else entry

    def _locate(self, entry: DataPath) -> tuple[int, str] | None:
        """:meth:`_split` of an entry of any unit; None outside every unit."""
        unit = datapath.schema_path(entry)
        return self._split(entry, unit) if unit in self._ids else None

    def _path(self, unit: int, rest: str) -> DataPath:
        return DataPath(rest if rest.startswith("/") else self._units[unit] + rest)

    def get(self, entry: DataPath) -> Stored | None:
        """What is kept of ``entry``; None when it is not indexed."""
        split = self._locate(entry)
        if split is None:
            return None
        found = self._db.execute(
            "SELECT key, refs FROM entry WHERE unit = ? AND rest = ?", split
        ).fetchone()
        if found is None:
            return None
        return Stored(self._units[split[0]], found[0] or "", found[1])

    def drop(self, entry: DataPath) -> Stored | None:
        """Forget an entry's row and the unique values it owns; what was kept, if anything."""
        stored = self.get(entry)
        if stored is not None:
            split = self._split(entry, stored.unit)
            self._db.execute("DELETE FROM entry WHERE unit = ? AND rest = ?", split)
            self._db.execute("DELETE FROM uniq WHERE unit = ? AND rest = ?", split)
        return stored

    def owner(self, unit: SchemaPath, spec: int, values: Sequence[str]) -> DataPath | None:
        """The entry that holds ``values`` for the ``spec``-th unique of ``unit``."""
        number = self._ids[unit]
        found = self._db.execute(
            "SELECT rest FROM uniq WHERE unit = ? AND spec = ? AND value = ?",
            (number, spec, unique_text(values)),
        ).fetchone()
        return None if found is None else self._path(number, found[0])

    def keep(self, entries: Iterable[Kept]) -> None:
        """Keep (or replace) the rows of entries, each the owner of its unique values (one
        SQL transaction: a rebuild's every entry, or a transaction's new rows)."""
        rows: list[tuple[int, str, str | None, int]] = []
        owners: list[tuple[int, int, str, str]] = []
        for entry, unit, key, refs, uniques in entries:
            number, rest = self._split(entry, unit)
            rows.append((number, rest, key or None, refs))
            owners.extend(
                (number, spec, unique_text(values), rest)
                for spec, values in enumerate(uniques)
                if values is not None
            )
        self._db.execute("BEGIN")
        try:
            self._db.executemany("INSERT OR REPLACE INTO entry VALUES (?, ?, ?, ?)", rows)
            self._db.executemany("INSERT OR REPLACE INTO uniq VALUES (?, ?, ?, ?)", owners)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def with_refs(self, sets: Iterable[int]) -> Iterator[tuple[DataPath, SchemaPath]]:
        """(entry, its unit) of every entry whose set of references is one of ``sets`` (a
        scan: for naming a referrer in a refusal)."""
        numbers = list(sets)
        if not numbers:
            return
        marks = ", ".join("?" * len(numbers))
        query = f"SELECT unit, rest FROM entry WHERE refs IN ({marks})"
        for unit, rest in self._db.execute(query, numbers):
            yield self._path(unit, rest), self._units[unit]
