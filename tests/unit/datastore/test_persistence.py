"""controller.datastore.journal and stores: acknowledged commits survive, torn tails do not."""

from __future__ import annotations

from pathlib import Path

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation
from controller.datastore.journal import Journal, frame, unframe
from controller.model import Schema
from tests.unit.datastore.conftest import RUNNING, TOP, create, item, item_path, read_json


def test_reopen_finds_every_acknowledged_edit(
    core: Core, test_schema: Schema, tmp_path: Path
) -> None:
    for key in range(2, 12):
        core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
    core.edit(RUNNING, [Edit(EditOperation.DELETE, item_path(5))], SYSTEM)
    expected = read_json(core, None)
    with Core(test_schema, tmp_path / "state", settings=core.settings) as reopened:
        assert read_json(reopened, None) == expected


def test_compaction_writes_a_snapshot_and_keeps_everything(
    test_schema: Schema, tmp_path: Path
) -> None:
    settings = CoreSettings(compact_minimum=200)
    with Core(test_schema, tmp_path, settings=settings) as opened:
        opened.edit(RUNNING, [create(f"{TOP}/pool[name='p1']", {"name": "p1"})], SYSTEM)
        for key in range(1, 30):
            opened.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
        expected = read_json(opened, None)
    assert (tmp_path / "running.json").exists()
    assert (tmp_path / "running.journal").stat().st_size < 2000
    with Core(test_schema, tmp_path, settings=settings) as reopened:
        assert read_json(reopened, None) == expected


def test_a_torn_journal_tail_is_dropped(core: Core, test_schema: Schema, tmp_path: Path) -> None:
    core.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM)
    expected = read_json(core, None)
    core.close()
    journal = tmp_path / "state" / "running.journal"
    whole = frame({"txid": 99, "edits": []})
    with journal.open("ab") as handle:
        handle.write(whole[: len(whole) - 3])  # a crash in the middle of a write
    with Core(test_schema, tmp_path / "state") as reopened:
        assert read_json(reopened, None) == expected
        reopened.edit(RUNNING, [create(item_path(3), item(3))], SYSTEM)
        expected = read_json(reopened, None)
    with Core(test_schema, tmp_path / "state") as again:
        assert read_json(again, None) == expected


def test_a_corrupt_frame_ends_the_journal() -> None:
    good = frame({"txid": 1}) + frame({"txid": 2})
    bad = bytearray(good)
    bad[-2] ^= 0xFF
    assert [record["txid"] for _, record in unframe(good)] == [1, 2]
    assert [record["txid"] for _, record in unframe(bytes(bad))] == [1]


def test_records_already_in_the_snapshot_are_skipped(tmp_path: Path) -> None:
    journal = Journal(tmp_path, "running")
    journal.append({"txid": 1, "edits": []})
    journal.write_snapshot("{}", 1, "2026-11-30T00:00:00+00:00")
    journal.append({"txid": 2, "edits": []})
    journal.close()
    loaded = Journal(tmp_path, "running").load()
    assert loaded.txid == 1
    assert [record["txid"] for record in loaded.records] == [2]


def test_startup_is_persisted_by_copy_config(
    core: Core, test_schema: Schema, tmp_path: Path
) -> None:
    core.copy_config(RUNNING, DatastoreName.STARTUP, SYSTEM)
    core.edit(RUNNING, [Edit(EditOperation.DELETE, item_path(1))], SYSTEM)
    core.close()
    with Core(test_schema, tmp_path / "state") as reopened:
        assert read_json(reopened, item_path(1)) is None
        assert read_json(reopened, item_path(1), DatastoreName.STARTUP) is not None
