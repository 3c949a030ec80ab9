"""The SQLite store of the indexes: entries found back by their path, unique owners, scans."""

from __future__ import annotations

from controller.datastore.entrystore import EntryStore, Stored
from controller.types import DataPath, SchemaPath

ENTRY = SchemaPath("/m:top/entry")
PAIR = SchemaPath("/m:top/pair")
BOX = SchemaPath("/m:box")


def test_entries_come_back_by_their_path_whatever_their_key_holds() -> None:
    store = EntryStore([ENTRY, PAIR, BOX])
    odd = DataPath("/m:top/entry[id='a/b[c]']")
    quoted = DataPath('/m:top/entry[id="it\'s"]')
    pair = DataPath("/m:top/pair[a='1'][b='2']")
    box = DataPath("/m:box")
    store.keep([(odd, ENTRY, "a/b[c]", 3, ()), (quoted, ENTRY, "", 0, ())])
    store.keep([(pair, PAIR, "", 1, ()), (box, BOX, "", 2, ())])
    assert store.get(odd) == Stored(ENTRY, "a/b[c]", 3)
    assert store.get(quoted) == Stored(ENTRY, "", 0)
    assert store.get(pair) == Stored(PAIR, "", 1)
    assert store.get(box) == Stored(BOX, "", 2)
    assert store.get(DataPath("/m:top/entry[id='other']")) is None
    assert store.get(DataPath("/m:elsewhere[id='a']")) is None  # in no unit
    assert sorted(store.with_refs([3, 2])) == [(box, BOX), (odd, ENTRY)]
    assert list(store.with_refs([])) == []
    store.keep([(odd, ENTRY, "a/b[c]", 4, ())])  # replaced
    assert store.get(odd) == Stored(ENTRY, "a/b[c]", 4)


def test_unique_values_have_one_owner_and_go_with_their_entry() -> None:
    store = EntryStore([ENTRY])
    first, second = DataPath("/m:top/entry[id='1']"), DataPath("/m:top/entry[id='2']")
    store.keep([(first, ENTRY, "", 0, [("a",), ("x", "y,z")])])
    store.keep([(second, ENTRY, "", 0, [None, ("x,y", "z")])])  # not the same values
    assert store.owner(ENTRY, 0, ("a",)) == first
    assert store.owner(ENTRY, 1, ("x", "y,z")) == first
    assert store.owner(ENTRY, 1, ("x,y", "z")) == second
    assert store.owner(ENTRY, 1, ("a",)) is None  # another constraint
    assert store.drop(first) == Stored(ENTRY, "", 0)
    assert store.owner(ENTRY, 0, ("a",)) is None
    assert store.owner(ENTRY, 1, ("x", "y,z")) is None
    assert store.owner(ENTRY, 1, ("x,y", "z")) == second
    assert store.drop(first) is None


def test_keeping_many_at_once_is_keeping_them_one_by_one() -> None:
    loaded, one_by_one = EntryStore([ENTRY]), EntryStore([ENTRY])
    entries = [DataPath(f"/m:top/entry[id='{n}']") for n in range(50)]
    loaded.keep([(e, ENTRY, str(n), n % 3, [(f"v{n}",)]) for n, e in enumerate(entries)])
    for n, entry in enumerate(entries):
        one_by_one.keep([(entry, ENTRY, str(n), n % 3, [(f"v{n}",)])])
    for n, entry in enumerate(entries):
        assert loaded.get(entry) == one_by_one.get(entry) == Stored(ENTRY, str(n), n % 3)
        assert loaded.owner(ENTRY, 0, (f"v{n}",)) == entry
    assert sorted(loaded.with_refs([1])) == sorted(one_by_one.with_refs([1]))
    loaded.clear()
    assert loaded.get(entries[0]) is None
    assert loaded.owner(ENTRY, 0, ("v0",)) is None
