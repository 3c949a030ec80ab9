"""Committed state is safe: damage stops the core at start, a repair keeps what precedes it,
a full disk never reports a committed edit as failed nor leaves a temporary file, and a
commit hook's refusal leaves no record behind.

The full disk is a :class:`~controller.datastore.files.Disk` that takes a budget of bytes and
then fails with ENOSPC (after writing part of what it was given, as a real one does): the seam
every persisted byte goes through, which no user sees.
"""

from __future__ import annotations

import errno
import os
import random
from pathlib import Path
from typing import IO

import pytest

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, Change, Registrations
from controller.datastore.damage import StateDamagedError
from controller.datastore.files import REAL_DISK
from controller.datastore.integrity import check_state, repair_to_last_good
from controller.datastore.journal import scan
from controller.datastore.statelock import StateLock, StateLockedError
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import Schema
from tests.unit.datastore.conftest import RUNNING, TOP, create, item, item_path, merge, read_json

EDITS = 30


def _ids(core: Core) -> set[int]:
    document = read_json(core, TOP)
    assert isinstance(document, dict)
    return {entry["id"] for entry in document["core-test:top"].get("item", [])}


def _opened_ids(test_schema: Schema, state: Path) -> set[int] | StateDamagedError:
    """The items a core opened on ``state`` holds, or the damage that stopped it."""
    try:
        with Core(test_schema, state) as core:
            return _ids(core)
    except StateDamagedError as exc:
        return exc


def _seeded(test_schema: Schema, state: Path) -> None:
    """Thirty-one commits left in the journal (closed as a crash leaves it: not compacted)."""
    with Core(test_schema, state, settings=CoreSettings(compact_at_close=False)) as core:
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        for key in range(1, EDITS + 1):
            core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)


def test_a_damaged_journal_stops_the_core_and_a_repair_keeps_what_precedes(
    test_schema: Schema, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    _seeded(test_schema, state)
    path = state / "running.journal"
    good = path.read_bytes()
    starts = [0, *[end for end, _ in scan(good, path).records][:-1]]
    draw = random.Random(1402)
    for _ in range(12):
        offset = draw.randrange(len(good))
        damaged = bytearray(good)
        damaged[offset] ^= draw.randrange(1, 256)
        path.write_bytes(bytes(damaged))
        outcome = _opened_ids(test_schema, state)
        if isinstance(outcome, StateDamagedError):
            assert outcome.damage.path == path
            assert outcome.damage.offset == max(start for start in starts if start <= offset)
        else:
            assert outcome == set(range(1, EDITS + 1)), "silently fewer edits"
    # The last flip stays; the check names it and the repair cuts the journal there.
    offset = len(good) // 2
    damaged = bytearray(good)
    damaged[offset] ^= 0x55
    path.write_bytes(bytes(damaged))
    frame = max(start for start in starts if start <= offset)
    before = starts.index(frame)  # intact records before the damage (the pool is the first)
    (report,) = [r for r in check_state(state) if r.path == path]
    assert report.damage is not None
    assert report.damage.offset == frame
    done, left = repair_to_last_good(state)
    assert not left
    assert f"cut at offset {frame}" in done[0]
    assert len(list(state.glob("running.journal.damaged-*"))) == 1
    assert all(r.ok for r in check_state(state))
    with Core(test_schema, state) as core:
        assert _ids(core) == set(range(1, before))


class FullDisk:
    """A disk with ``budget`` bytes free: past it a write puts what fits, then fails."""

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def write(self, handle: IO[bytes], data: bytes) -> None:
        if len(data) > self.budget:
            REAL_DISK.write(handle, data[: self.budget])
            self.budget = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        REAL_DISK.write(handle, data)
        self.budget -= len(data)

    def sync(self, handle: IO[bytes]) -> None:
        REAL_DISK.sync(handle)


def _refusal_of(core: Core, key: int) -> str | None:
    """Create item ``key`` (a long name); the error when it is refused."""
    try:
        core.edit(RUNNING, [create(item_path(key), item(key, name="n" * 200))], SYSTEM)
    except CatsError as exc:
        return str(exc)
    return None


def test_a_full_disk_never_reports_a_committed_edit_as_failed(
    test_schema: Schema, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "state"
    disk = FullDisk(35_000)  # the disk fills during a compaction (LYB), after its commit
    settings = CoreSettings(compact_minimum=4_000, disk=disk)  # compactions fail too
    acknowledged: set[int] = set()
    failed: set[int] = set()
    with Core(test_schema, state, settings=settings) as core:
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        for key in range(1, 200):
            refusal = _refusal_of(core, key)
            if refusal is None:
                acknowledged.add(key)
            else:
                assert "No space left" in refusal
                failed.add(key)
                assert not list(state.glob("*.tmp")), "a temporary file was left behind"
            assert _ids(core) == acknowledged  # a failed edit is not in running either
            if len(failed) == 5:
                disk.budget = 1 << 30  # space is freed: edits go on
        assert len(failed) >= 5
        assert len(acknowledged) > 150
    assert "compaction postponed" in caplog.text  # the edit stood; the journal grows instead
    assert not list(state.glob("*.tmp"))
    with Core(test_schema, state) as reopened:
        assert _ids(reopened) == acknowledged


def test_a_refusing_commit_hook_leaves_no_record(test_schema: Schema, tmp_path: Path) -> None:
    def refuse_item_7(change: Change) -> None:
        if any("id='7'" in path for path in change.changed_paths):
            raise CatsError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "refused"))

    registrations = Registrations(commit_hooks=[refuse_item_7])
    state = tmp_path / "state"
    with Core(test_schema, state, registrations) as core:
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        for key in (6, 7, 8):
            try:
                core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
            except CatsError:
                assert key == 7
    with Core(test_schema, state) as reopened:
        assert _ids(reopened) == {6, 8}


def test_the_state_lock_names_its_holder(tmp_path: Path) -> None:
    first = StateLock(tmp_path)
    first.acquire()
    try:
        with pytest.raises(StateLockedError, match=f"locked by pid {os.getpid()}"):
            StateLock(tmp_path).acquire()
    finally:
        first.release()
    with StateLock(tmp_path):
        pass
