"""Group commit: concurrent commits of running share one journal fsync, and none is
acknowledged before an fsync that started after its record was written has returned.

The disk is a :class:`~controller.datastore.files.Disk` whose first fsync is held until the
test lets it go (the seam every persisted byte goes through, which no user sees): meanwhile
the other sessions' commits are applied and written, and wait for the next fsync.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import IO

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM
from controller.datastore.files import REAL_DISK
from controller.datastore.journal import scan
from controller.model import Schema
from tests.unit.datastore.conftest import RUNNING, TOP, create, item, item_path, merge, read_json

SESSIONS = 8
WAIT_S = 60.0


class HeldDisk:
    """A real disk that counts writes and fsyncs; while ``held`` an fsync waits for
    ``release``, and the size the journal had when each fsync returned is kept."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.writes = 0
        self.syncs = 0
        self.held = False
        self.release = threading.Event()
        self.durable: list[int] = []

    def write(self, handle: IO[bytes], data: bytes) -> None:
        REAL_DISK.write(handle, data)
        with self.changed:
            self.writes += 1
            self.changed.notify_all()

    def sync(self, handle: IO[bytes]) -> None:
        size = handle.seek(0, 2)
        if self.held:
            with self.changed:
                self.syncs += 1
                self.changed.notify_all()
            assert self.release.wait(WAIT_S)
        REAL_DISK.sync(handle)
        with self.changed:
            self.durable.append(size)
            self.changed.notify_all()


def test_concurrent_commits_share_an_fsync_and_wait_for_it(
    test_schema: Schema, tmp_path: Path
) -> None:
    disk = HeldDisk()
    state = tmp_path / "state"
    acknowledged: list[tuple[int, int]] = []  # (key, durable bytes when acknowledged)
    with Core(test_schema, state, settings=CoreSettings(disk=disk)) as core:
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        disk.held = True
        before = disk.writes

        def commit(key: int) -> None:
            core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
            acknowledged.append((key, disk.durable[-1] if disk.durable else 0))

        threads = [threading.Thread(target=commit, args=(key,)) for key in range(1, 9)]
        for thread in threads:
            thread.start()

        def written_and_held() -> bool:
            return disk.writes - before == SESSIONS and disk.syncs >= 1

        with disk.changed:  # every commit written, the first fsync reached and held
            assert disk.changed.wait_for(written_and_held, WAIT_S)
        assert disk.syncs == 1  # the others wait for it rather than start their own
        assert acknowledged == []  # written, applied, not durable: nobody acknowledged
        disk.release.set()
        for thread in threads:
            thread.join(WAIT_S)
        assert sorted(key for key, _ in acknowledged) == list(range(1, 9))
        assert disk.syncs == 2  # the held one, then one for the seven written meanwhile
        ends = _record_ends(state / "running.journal")
        for key, durable in acknowledged:
            assert ends[item_path(key)] <= durable, f"item {key} acknowledged before its fsync"
        assert _ids(core) == set(range(1, 9))
    with Core(test_schema, state) as core:  # and all of them survive a restart
        assert _ids(core) == set(range(1, 9))


def _record_ends(path: Path) -> dict[str, int]:
    """The offset after each record of the journal, by the path of its first edit."""
    ends: dict[str, int] = {}
    for end, record in scan(path.read_bytes(), path).records:
        edits = record["edits"]
        assert isinstance(edits, list)
        ends[str(edits[0]["path"])] = end
    return ends


def _ids(core: Core) -> set[int]:
    document = read_json(core, TOP)
    assert isinstance(document, dict)
    return {entry["id"] for entry in document["core-test:top"].get("item", [])}
