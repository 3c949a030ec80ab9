"""Start-up of a persisted core: a clean close folds the journal into a LYB snapshot, which the
next start loads without validating it again, defaults included; a LYB snapshot of another
schema is validated; a damaged one stops the start naming its file; startup without a file of
its own is running as loaded, also when running changes before startup is first read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.datastore import Core, CoreSettings, snapshot
from controller.datastore.api import SYSTEM, DatastoreName, ReadRequest, WithDefaults
from controller.datastore.damage import StateDamagedError
from controller.datastore.errors import DatastoreError
from controller.datastore.integrity import check_state
from controller.datastore.stores import AS_LOADED
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

STARTUP = DatastoreName.STARTUP


def _header(path: Path) -> dict[str, object]:
    header = json.loads(path.read_bytes().split(b"\n", 1)[0])
    assert isinstance(header, dict)
    return header


def _all(core: Core, datastore: DatastoreName = RUNNING) -> object:
    """The whole datastore with its defaults (RFC 6243 report-all)."""
    request = ReadRequest(datastore, None, with_defaults=WithDefaults.REPORT_ALL)
    document = core.read(request, SYSTEM).document
    return None if document is None else json.loads(document)


def _seeded(test_schema: Schema, state: Path, items: int = 5) -> object:
    with Core(test_schema, state) as core:
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        for key in range(1, items + 1):
            core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
        return _all(core)


def test_a_clean_close_folds_the_journal_into_a_lyb_snapshot(
    test_schema: Schema, tmp_path: Path
) -> None:
    expected = _seeded(test_schema, tmp_path)
    assert (tmp_path / "running.journal").stat().st_size == 0
    header = _header(tmp_path / "running.json")
    assert header["format"] == "lyb"
    assert header["txid"] == 6
    with Core(test_schema, tmp_path) as reopened:
        assert reopened.running.current  # loaded as it was printed: not validated again
        assert _all(reopened) == expected  # defaults (core-test:top/mode) included
        assert expected["core-test:top"]["mode"] == "fast"  # type: ignore[index]
        with pytest.raises(DatastoreError, match=r'Unique data leaf.*"addr"'):  # the indexes
            reopened.edit(RUNNING, [create(item_path(10), item(10, addr="a1"))], SYSTEM)
        reopened.edit(RUNNING, [create(item_path(9), item(9))], SYSTEM)
    (report,) = [r for r in check_state(tmp_path) if r.path.name == "running.json"]
    assert report.ok
    assert "lyb" in report.summary


def test_a_crash_leaves_the_journal_and_the_next_start_replays_and_validates(
    test_schema: Schema, tmp_path: Path
) -> None:
    expected = _seeded(test_schema, tmp_path)
    settings = CoreSettings(compact_at_close=False)  # closed as a crash leaves it
    with Core(test_schema, tmp_path, settings=settings) as core:
        core.edit(RUNNING, [create(item_path(7), item(7))], SYSTEM)
        after = _all(core)
    assert after != expected
    assert (tmp_path / "running.journal").stat().st_size > 0
    with Core(test_schema, tmp_path) as reopened:
        assert not reopened.running.current  # replayed: validated in full
        assert _all(reopened) == after


def test_a_lyb_snapshot_of_another_schema_is_validated(test_schema: Schema, tmp_path: Path) -> None:
    data = snapshot.encode(invalid_lyb(test_schema), 3, "t", lyb_schema="another-schema")
    (tmp_path / "running.json").write_bytes(data)
    with pytest.raises(DatastoreError, match="name"):
        Core(test_schema, tmp_path)


def test_a_damaged_lyb_snapshot_stops_the_start_naming_the_file(
    test_schema: Schema, tmp_path: Path
) -> None:
    _seeded(test_schema, tmp_path)
    path = tmp_path / "running.json"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(StateDamagedError) as raised:
        Core(test_schema, tmp_path)
    assert raised.value.damage.path == path
    assert str(path) in str(raised.value)
    (report,) = [r for r in check_state(tmp_path) if r.path == path]
    assert not report.ok


def test_startup_is_running_as_loaded_even_when_running_changes_first(
    test_schema: Schema, tmp_path: Path
) -> None:
    _seeded(test_schema, tmp_path)
    assert not (tmp_path / "startup.json").exists()
    with Core(test_schema, tmp_path) as core:
        loaded = read_json(core, None)
        core.edit(RUNNING, [create(item_path(8), item(8))], SYSTEM)  # before startup is read
        assert read_json(core, None, STARTUP) == loaded
        assert read_json(core, item_path(8)) is not None
    assert not (tmp_path / "startup.json").exists()  # read, never changed: not written
    settings = CoreSettings(shadow_nodes=1)  # every edit of running is worked on a copy
    with Core(test_schema, tmp_path, settings=settings) as core:
        loaded = read_json(core, None)
        core.edit(RUNNING, [create(item_path(11), item(11))], SYSTEM)
        assert read_json(core, None, STARTUP) == loaded


def test_startup_as_loaded_is_read_from_the_snapshot_after_running_replaced_it(
    test_schema: Schema, tmp_path: Path
) -> None:
    """Running loaded from its LYB snapshot keeps a link to that file when it first changes
    (no copy in memory); startup is parsed from it even after a compaction replaced the
    snapshot, and the link goes once read, at close, or at the next start after a crash."""
    _seeded(test_schema, tmp_path)
    kept = tmp_path / AS_LOADED
    with Core(test_schema, tmp_path) as core:
        loaded = read_json(core, None)
        core.edit(RUNNING, [create(item_path(8), item(8))], SYSTEM)
        assert kept.exists()
        core.running.write_snapshot(core.running.txid, "2026-12-02T00:00:00+00:00")  # compaction
        assert read_json(core, None, STARTUP) == loaded
        assert not kept.exists()
        assert read_json(core, item_path(8)) is not None
    with Core(test_schema, tmp_path) as core:
        core.edit(RUNNING, [create(item_path(9), item(9))], SYSTEM)
        assert kept.exists()
    assert not kept.exists()  # startup never read: removed at close
    kept.write_bytes(b"left by a crash")
    with Core(test_schema, tmp_path) as core:
        assert not kept.exists()
        assert read_json(core, item_path(9)) is not None
