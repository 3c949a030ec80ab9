"""Running's LYB snapshot parsed ahead (controller.datastore.preparse): the core takes the tree
only when it is of the very bytes the core read and checked; anything else (a snapshot
replaced meanwhile, a damaged or foreign one, none at all) takes the core's own path, with
its own errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.datastore import Core, CoreSettings, snapshot
from controller.datastore.api import SYSTEM
from controller.datastore.damage import StateDamagedError
from controller.datastore.errors import DatastoreError
from controller.datastore.preparse import Preparse
from controller.model import Schema
from tests.unit.datastore.conftest import (
    RUNNING,
    TOP,
    create,
    invalid_lyb,
    item,
    item_path,
    merge,
    read_json,
)


class Recording(Preparse):
    """A preparse that says whether the core took its tree."""

    taken: bool | None = None

    def take(self, found: snapshot.Snapshot) -> Any:
        tree = super().take(found)
        self.taken = tree is not None
        return tree


def _seeded(schema: Schema, state: Path, items: int) -> object:
    with Core(schema, state) as core:  # closed cleanly: a LYB snapshot, an empty journal
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        for key in range(1, items + 1):
            core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
        return read_json(core, None)


def _opened(schema: Schema, state: Path, preparse: Preparse) -> Core:
    return Core(schema, state, settings=CoreSettings(preparse=preparse))


def test_the_core_takes_the_tree_parsed_ahead(test_schema: Schema, tmp_path: Path) -> None:
    expected = _seeded(test_schema, tmp_path, 5)
    preparse = Recording(test_schema, tmp_path).start()
    with _opened(test_schema, tmp_path, preparse) as core:
        assert preparse.taken is True
        assert core.running.current  # the printed, validated tree: not validated again
        assert read_json(core, None) == expected
        with pytest.raises(DatastoreError, match=r'Unique data leaf.*"addr"'):  # indexed too
            core.edit(RUNNING, [create(item_path(10), item(10, addr="a1"))], SYSTEM)


def test_a_snapshot_replaced_after_the_parse_is_parsed_again(
    test_schema: Schema, tmp_path: Path
) -> None:
    _seeded(test_schema, tmp_path, 2)
    preparse = Recording(test_schema, tmp_path).start()
    preparse.wait()  # parsed the two-item snapshot
    other = tmp_path / "other"
    expected = _seeded(test_schema, other, 4)
    (tmp_path / "running.json").write_bytes((other / "running.json").read_bytes())
    with _opened(test_schema, tmp_path, preparse) as core:
        assert preparse.taken is False
        assert read_json(core, None) == expected


def test_a_damaged_snapshot_stops_the_start_naming_the_file(
    test_schema: Schema, tmp_path: Path
) -> None:
    _seeded(test_schema, tmp_path, 3)
    path = tmp_path / "running.json"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x10
    path.write_bytes(bytes(data))
    preparse = Recording(test_schema, tmp_path).start()
    with pytest.raises(StateDamagedError) as raised:
        _opened(test_schema, tmp_path, preparse)
    assert raised.value.damage.path == path


def test_a_snapshot_of_another_schema_is_validated(test_schema: Schema, tmp_path: Path) -> None:
    data = snapshot.encode(invalid_lyb(test_schema), 3, "t", lyb_schema="another-schema")
    (tmp_path / "running.json").write_bytes(data)
    preparse = Recording(test_schema, tmp_path).start()
    with pytest.raises(DatastoreError, match="name"):
        _opened(test_schema, tmp_path, preparse)
    assert preparse.taken is None  # never offered: the core parses it for a newer schema


def test_a_new_state_directory_has_nothing_to_take(test_schema: Schema, tmp_path: Path) -> None:
    preparse = Recording(test_schema, tmp_path / "new").start()
    with _opened(test_schema, tmp_path / "new", preparse) as core:
        assert read_json(core, None) == {}
    assert preparse.taken is None
