"""Large commits and copies of whole datastores (RFC 6241 7.3, 8.3.4.1) worked on a copy:
reads of running and candidate go on and see the committed state meanwhile; the outcome and
what is kept (journal, audit, hooks, the candidate) are those of a small one.

The large transaction is held at the seam every persisted byte goes through (a disk whose
write waits for the test), after it was applied and validated on its copy and before it is
made current (:mod:`tests.unit.datastore.test_shadow`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller import audit
from controller.audit import AuditRecord
from controller.datastore import Core, CoreSettings
from controller.datastore.api import (
    SYSTEM,
    Change,
    DatastoreName,
    Edit,
    EditOperation,
    Registrations,
)
from controller.errors import CatsError
from controller.model import Encoding, Schema
from tests.unit.datastore.conftest import RUNNING, TOP, merge, read_json
from tests.unit.datastore.test_shadow import WAIT_S, HeldDisk

CANDIDATE = DatastoreName.CANDIDATE
STARTUP = DatastoreName.STARTUP
ITEMS = 40


class ListAudit:
    """The audit records kept, in a list."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    def append(self, record: AuditRecord) -> int:
        self.records.append(record)
        return len(self.records)

    def recent(self, limit: int) -> list[AuditRecord]:
        return self.records[-limit:]

    def has_commit(self, commit_id: int, time: str) -> bool:
        return any((r.commit_id, r.time) == (commit_id, time) for r in self.records)

    def close(self) -> None:
        """Nothing to close."""


def _items(first: int, count: int, pool: str = "p1") -> Edit:
    items = [
        {"id": key, "name": f"i{key}", "addr": f"a{key}", "pool": pool}
        for key in range(first, first + count)
    ]
    return merge(TOP, {"item": items})


def _ids(core: Core, datastore: DatastoreName = RUNNING) -> set[int]:
    document = read_json(core, TOP, datastore)
    assert isinstance(document, dict)
    return {item["id"] for item in document["core-test:top"].get("item", [])}


@pytest.fixture
def held(
    test_schema: Schema, tmp_path: Path
) -> Iterator[tuple[Core, HeldDisk, list[Change], ListAudit]]:
    disk = HeldDisk()
    seen: list[Change] = []
    kept = ListAudit()
    registrations = Registrations(commit_hooks=[seen.append])
    settings = CoreSettings(shadow_nodes=50, max_edit_nodes=10_000, disk=disk)
    with Core(test_schema, tmp_path / "state", registrations, settings) as core:
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        core.edit(RUNNING, [_items(0, 2)], SYSTEM)
        seen.clear()
        audit.install(kept)
        try:
            yield core, disk, seen, kept
        finally:
            audit.install(None)


def _in_flight(
    core: Core,
    disk: HeldDisk,
    work: Callable[[], object],
    locked: dict[DatastoreName, str] | None = None,
) -> list[BaseException]:
    """Run ``work`` until it is held at the disk; the failures once it is released."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            failures.append(exc)

    disk.hold.set()
    writer = threading.Thread(target=run)
    writer.start()
    assert disk.holding.wait(WAIT_S)  # applied and validated on the copy, not yet current
    assert _ids(core) == {0, 1}  # running is read, as committed
    assert core.lock_holders() == (locked or {})  # the locks are read too
    # a lock asked for meanwhile is granted once the change is made (RFC 6241 7.5)
    locker = threading.Thread(target=core.lock, args=(DatastoreName.STARTUP, "8"))
    locker.start()
    locker.join(0.5)
    assert locker.is_alive()
    disk.release.set()
    writer.join(WAIT_S)
    assert not writer.is_alive()
    locker.join(WAIT_S)
    assert core.lock_holders()[DatastoreName.STARTUP] == "8"
    core.unlock(DatastoreName.STARTUP, "8")
    disk.hold.clear()
    return failures


def test_reads_go_on_during_a_large_commit_of_the_candidate(
    held: tuple[Core, HeldDisk, list[Change], ListAudit],
) -> None:
    core, disk, seen, kept = held
    core.edit(CANDIDATE, [_items(100, ITEMS)], SYSTEM)  # a large edit of the candidate
    assert _ids(core, CANDIDATE) == {0, 1, *range(100, 100 + ITEMS)}
    assert _ids(core) == {0, 1}

    def commit() -> None:
        assert _ids(core, CANDIDATE) == {0, 1, *range(100, 100 + ITEMS)}
        core.commit(SYSTEM)

    assert not _in_flight(core, disk, commit)
    assert _ids(core) == _ids(core, CANDIDATE) == {0, 1, *range(100, 100 + ITEMS)}
    assert len(seen) == 1
    assert [r.event for r in kept.records] == ["commit"]
    assert not core.candidate.modified


def test_reads_go_on_during_a_large_copy_of_the_candidate_to_running(
    held: tuple[Core, HeldDisk, list[Change], ListAudit],
) -> None:
    core, disk, seen, kept = held
    core.edit(CANDIDATE, [_items(100, ITEMS)], SYSTEM)
    copy = lambda: core.copy_config(CANDIDATE, RUNNING, SYSTEM)  # noqa: E731
    assert not _in_flight(core, disk, copy)
    assert _ids(core) == {0, 1, *range(100, 100 + ITEMS)}
    assert len(seen) == 1
    assert [r.event for r in kept.records] == ["commit"]


def test_a_large_invalid_candidate_is_refused_at_commit_and_changes_nothing(
    held: tuple[Core, HeldDisk, list[Change], ListAudit],
) -> None:
    core, _, seen, kept = held
    core.edit(CANDIDATE, [_items(100, ITEMS, pool="nowhere")], SYSTEM)  # a dangling leafref
    before = core.revision(RUNNING, None)
    with pytest.raises(CatsError) as raised:
        core.commit(SYSTEM)
    (item,) = raised.value.items
    assert item.tag == "data-missing"
    assert item.app_tag == "instance-required"
    assert _ids(core) == {0, 1}
    assert core.revision(RUNNING, None) == before
    assert _ids(core, CANDIDATE) == {0, 1, *range(100, 100 + ITEMS)}  # kept to be fixed
    assert not seen
    assert not kept.records


def test_a_large_copy_to_the_candidate_replaces_it_and_leaves_running(
    held: tuple[Core, HeldDisk, list[Change], ListAudit],
) -> None:
    core, _, seen, _ = held
    core.edit(CANDIDATE, [_items(100, 3)], SYSTEM)  # small: the candidate's own copy
    before = core.revision(CANDIDATE, None)
    document = read_json(core, None)
    top = json.dumps({"core-test:top": {"item": [{"id": 9, "name": "x", "pool": "nowhere"}]}})
    core.edit(CANDIDATE, [Edit(EditOperation.REPLACE, TOP, top)], SYSTEM)  # invalid is fine
    assert _ids(core, CANDIDATE) == {9}
    core.copy_config(RUNNING, CANDIDATE, SYSTEM)
    assert read_json(core, None, CANDIDATE) == document
    assert core.revision(CANDIDATE, None) != before
    large = Edit(EditOperation.REPLACE, TOP, json.dumps(_whole(200, ITEMS)))
    with pytest.raises(CatsError):  # not type-valid: refused, the candidate as it was
        core.edit(
            CANDIDATE, [Edit(EditOperation.MERGE, TOP, '{"core-test:top": 1}'), large], SYSTEM
        )
    assert read_json(core, None, CANDIDATE) == document
    core.edit(CANDIDATE, [large], SYSTEM, test_only=True)
    assert read_json(core, None, CANDIDATE) == document
    core.edit(CANDIDATE, [large], SYSTEM)
    assert _ids(core, CANDIDATE) == set(range(200, 200 + ITEMS))
    assert _ids(core) == {0, 1}
    core.discard_changes()
    assert _ids(core, CANDIDATE) == {0, 1}
    assert not seen


def _whole(first: int, count: int) -> dict[str, object]:
    items = [
        {"id": key, "name": f"i{key}", "addr": f"a{key}", "pool": "p1"}
        for key in range(first, first + count)
    ]
    return {"core-test:top": {"pool": [{"name": "p1"}], "item": items}}


def test_a_commit_and_a_copy_past_the_edit_bound_are_not_refused(
    held: tuple[Core, HeldDisk, list[Change], ListAudit],
) -> None:
    core, _, _, _ = held  # max_edit_nodes 10k bounds what a client sends, not what is held
    for first in (1000, 2000, 3000):
        core.edit(CANDIDATE, [_items(first, 1000)], SYSTEM)  # about 4k data nodes each
    with pytest.raises(CatsError) as raised:
        core.edit(RUNNING, [_items(5000, 3000)], SYSTEM)
    assert raised.value.items[0].tag == "too-big"
    core.commit(SYSTEM)  # the three edits replayed: about 12k data nodes
    assert len(_ids(core)) == 2 + 3000
    core.edit(RUNNING, [_items(9000, 1)], SYSTEM)
    core.copy_config(RUNNING, CANDIDATE, SYSTEM)
    core.edit(RUNNING, [_items(9001, 1)], SYSTEM)
    core.copy_config(CANDIDATE, RUNNING, SYSTEM)  # a whole datastore of about 12k data nodes
    assert 9001 not in _ids(core)
    assert len(_ids(core)) == 2 + 3000 + 1


def test_reads_go_on_during_a_large_rollback_of_a_confirmed_commit(
    held: tuple[Core, HeldDisk, list[Change], ListAudit],
) -> None:
    core, disk, seen, kept = held
    core.lock(RUNNING, "7")  # the rollback is the server's: no session's lock refuses it
    backup = json.dumps(_whole(100, ITEMS))
    restore = lambda: core.restore(RUNNING, backup, Encoding.JSON)  # noqa: E731
    assert not _in_flight(core, disk, restore, locked={RUNNING: "7"})
    assert _ids(core) == set(range(100, 100 + ITEMS))
    assert len(seen) == 1
    assert [r.event for r in kept.records] == ["commit"]


def test_reads_go_on_during_a_large_copy_of_running_to_startup(
    held: tuple[Core, HeldDisk, list[Change], ListAudit],
) -> None:
    """Saving the configuration (copy-config running to startup): startup and running are
    read as they were while it is worked on; then startup is running's copy."""
    core, disk, _, _ = held
    core.copy_config(RUNNING, STARTUP, SYSTEM)  # small: under the lock
    core.edit(RUNNING, [_items(100, ITEMS)], SYSTEM)
    failures: list[BaseException] = []

    def copy() -> None:
        try:
            core.copy_config(RUNNING, STARTUP, SYSTEM)
        except BaseException as exc:
            failures.append(exc)

    disk.hold.set()
    writer = threading.Thread(target=copy)
    writer.start()
    assert disk.holding.wait(WAIT_S)  # applied and validated on the copy, not yet current
    read: list[set[int]] = []
    reader = threading.Thread(target=lambda: read.append(_ids(core, STARTUP)))
    reader.start()
    reader.join(WAIT_S)
    assert not reader.is_alive()  # not held behind the copy
    assert read == [{0, 1}]  # as committed
    disk.release.set()
    writer.join(WAIT_S)
    assert not writer.is_alive()
    disk.hold.clear()
    assert not failures
    assert _ids(core, STARTUP) == {0, 1, *range(100, 100 + ITEMS)}
