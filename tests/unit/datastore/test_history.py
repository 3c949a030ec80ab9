"""The core's commit history: reverse edits that undo every kind of transaction exactly, trials
that change nothing, and comparisons as path-level changes (no sockets)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.audit import SqliteHistory
from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, Edit, EditOperation, InsertWhere, Registrations
from controller.datastore.history import decode
from controller.errors import CatsError
from controller.model import Schema
from controller.types import DataPath
from tests.unit.datastore.conftest import (
    RUNNING,
    TOP,
    create,
    item,
    item_path,
    merge,
    read_json,
)

ORDERED = f"{TOP}/ordered"


def ordered(name: str) -> DataPath:
    return DataPath(f"{ORDERED}[name='{name}']")


@pytest.fixture
def history_core(test_schema: Schema, tmp_path: Path) -> Iterator[tuple[Core, SqliteHistory]]:
    """A core that keeps its history, with two pools, an item and the ordered a, b, c."""
    store = SqliteHistory(tmp_path, 100)
    settings = CoreSettings(history=store)
    with Core(test_schema, tmp_path / "state", Registrations(), settings=settings) as core:
        names = [{"name": n} for n in "abc"]
        core.edit(
            RUNNING,
            [merge(TOP, {"pool": [{"name": "p1"}, {"name": "p2"}], "ordered": names})],
            SYSTEM,
        )
        core.edit(RUNNING, [create(item_path(1), item(1))], SYSTEM)
        yield core, store
    store.close()


def undo_last(core: Core, store: SqliteHistory) -> None:
    """Apply the reverse edits of the newest commit as one transaction."""
    (_, document), *_ = store.reverse_after(core.running.txid - 1)
    core.edit(RUNNING, decode(document), SYSTEM)


EDITS = {
    "create": [create(item_path(2), item(2))],
    "merge": [merge(item_path(1), {"id": 1, "addr": "changed"})],
    "replace": [
        Edit(
            EditOperation.REPLACE,
            item_path(1),
            json.dumps({"core-test:item": [item(1, name="new")]}),
        )
    ],
    "delete": [Edit(EditOperation.DELETE, item_path(1))],
    "move": [Edit(EditOperation.MOVE, ordered("c"), where=InsertWhere.FIRST)],
    "delete-ordered": [Edit(EditOperation.DELETE, ordered("b"))],
    "insert": [
        Edit(
            EditOperation.INSERT,
            ordered("x"),
            json.dumps({"core-test:ordered": [{"name": "x"}]}),
            where=InsertWhere.AFTER,
            point=ordered("a"),
        )
    ],
    "root": [
        Edit(
            EditOperation.REPLACE,
            DataPath("/"),
            json.dumps({"core-test:top": {"pool": [{"name": "p9"}]}}),
        )
    ],
}


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_reverse_edits_undo_each_kind_of_transaction_exactly(
    history_core: tuple[Core, SqliteHistory], kind: str
) -> None:
    core, store = history_core
    before = read_json(core, None)
    core.edit(RUNNING, EDITS[kind], SYSTEM)
    assert read_json(core, None) != before
    undo_last(core, store)
    assert read_json(core, None) == before  # content and the order of the ordered list


def test_a_trial_changes_nothing_and_names_the_changes(
    history_core: tuple[Core, SqliteHistory],
) -> None:
    core, _ = history_core
    before, txid = read_json(core, None), core.running.txid
    edits = [*EDITS["create"], *EDITS["move"], Edit(EditOperation.DELETE, ordered("a"))]
    items = core.trial(edits, SYSTEM, validate=True)
    assert read_json(core, None) == before
    assert core.running.txid == txid
    found = {(i.operation, i.path) for i in items}
    assert ("create", item_path(2)) in found
    assert ("delete", ordered("a")) in found
    assert ("move", ordered("c")) in found
    backwards = core.trial(edits, SYSTEM, validate=False, forward=False)
    assert ("delete", item_path(2)) in {(i.operation, i.path) for i in backwards}


def test_a_trial_of_invalid_edits_raises_and_changes_nothing(
    history_core: tuple[Core, SqliteHistory],
) -> None:
    core, _ = history_core
    before = read_json(core, None)
    bad = [merge(item_path(1), {"id": 1, "pool": "no-such-pool"})]
    with pytest.raises(CatsError) as raised:
        core.trial(bad, SYSTEM, validate=True)
    assert any(item.path and item.path.startswith(item_path(1)) for item in raised.value.items)
    assert read_json(core, None) == before


def test_whole_trees_compare_leaf_by_leaf(history_core: tuple[Core, SqliteHistory]) -> None:
    core, store = history_core
    core.edit(RUNNING, [merge(item_path(1), {"id": 1, "addr": "elsewhere"})], SYSTEM)
    (_, document), *_ = store.reverse_after(core.running.txid - 1)
    past = core.rebuilt(decode(document))
    try:
        items = core.compare_trees(past, core.running, SYSTEM)
    finally:
        past.close()
    assert [(i.operation, i.path) for i in items] == [("replace", f"{item_path(1)}/addr")]
    assert json.loads(items[0].new or "{}") == {"core-test:addr": "elsewhere"}


def test_a_merge_into_a_default_only_container_is_undone(
    test_schema: Schema, tmp_path: Path
) -> None:
    """The container held only its defaults (it prints as nothing): the reverse edit removes
    what the merge wrote instead of replacing the container with an empty value."""
    store = SqliteHistory(tmp_path, 100)
    settings = CoreSettings(history=store)
    with Core(test_schema, tmp_path / "state", Registrations(), settings=settings) as core:
        before = read_json(core, None)
        core.edit(RUNNING, [merge(TOP, {"label": "set"})], SYSTEM)
        assert read_json(core, None) != before
        undo_last(core, store)
        assert read_json(core, None) == before
    store.close()
