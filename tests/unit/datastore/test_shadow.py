"""Large edits of running (controller.datastore.shadow): worked on a copy, so that reads go on
and see the committed state until the edit is made current; past the bound, refused unparsed.

The large edit is held at the seam every persisted byte goes through (a disk whose write waits
for the test), after it was applied and validated on its copy and before it is made current.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, Change, Edit, EditOperation, Registrations
from controller.datastore.files import REAL_DISK
from controller.datastore.shadow import edit_nodes
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import Encoding, Schema
from tests.unit.datastore.conftest import RUNNING, TOP, merge, read_json

ITEMS = 40
WAIT_S = 60.0


class HeldDisk:
    """A disk whose writes wait, once ``hold`` is set, until ``release`` is."""

    def __init__(self) -> None:
        self.hold = threading.Event()
        self.holding = threading.Event()
        self.release = threading.Event()

    def write(self, handle: IO[bytes], data: bytes) -> None:
        if self.hold.is_set():
            self.holding.set()
            assert self.release.wait(WAIT_S)
        REAL_DISK.write(handle, data)

    def sync(self, handle: IO[bytes]) -> None:
        REAL_DISK.sync(handle)


def _items(count: int) -> Edit:
    items = [
        {"id": key, "name": f"i{key}", "addr": f"a{key}", "pool": "p1"} for key in range(count)
    ]
    return merge(TOP, {"pool": [{"name": "p1"}], "item": items})


def _ids(core: Core) -> set[int]:
    document = read_json(core, TOP)
    assert isinstance(document, dict)
    return {item["id"] for item in document["core-test:top"].get("item", [])}


@pytest.fixture
def held(test_schema: Schema, tmp_path: Path) -> Iterator[tuple[Core, HeldDisk, list[Change]]]:
    disk = HeldDisk()
    seen: list[Change] = []
    registrations = Registrations(commit_hooks=[seen.append])
    settings = CoreSettings(shadow_nodes=50, max_edit_nodes=10_000, disk=disk)
    with Core(test_schema, tmp_path / "state", registrations, settings) as core:
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        seen.clear()
        yield core, disk, seen


def test_reads_go_on_and_see_the_committed_state_during_a_large_edit(
    held: tuple[Core, HeldDisk, list[Change]],
) -> None:
    core, disk, seen = held
    edit = _items(ITEMS)
    assert edit_nodes([edit]) >= 50
    disk.hold.set()
    failures: list[BaseException] = []

    def large() -> None:
        try:
            core.edit(RUNNING, [edit], SYSTEM)
        except BaseException as exc:
            failures.append(exc)

    writer = threading.Thread(target=large)
    writer.start()
    assert disk.holding.wait(WAIT_S)  # applied and validated on the copy, not yet current
    assert _ids(core) == set()  # a read is answered, from the committed state
    assert not seen  # no hook has seen it either
    disk.release.set()
    writer.join(WAIT_S)
    assert not failures
    assert _ids(core) == set(range(ITEMS))
    assert len(seen) == 1
    assert "core-test:top" in seen[0].diff


def test_a_large_edit_is_persisted_and_refused_by_a_hook_it_leaves_nothing(
    test_schema: Schema, tmp_path: Path
) -> None:
    refused = {"yes": True}

    def hook(change: Change) -> None:
        if refused["yes"]:
            raise CatsError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "refused"))

    registrations = Registrations(commit_hooks=[hook])
    settings = CoreSettings(shadow_nodes=50)
    state = tmp_path / "state"
    with Core(test_schema, state, registrations, settings) as core:
        refused["yes"] = False
        core.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}]})], SYSTEM)
        refused["yes"] = True
        with pytest.raises(CatsError, match="refused"):
            core.edit(RUNNING, [_items(ITEMS)], SYSTEM)
        assert _ids(core) == set()
        refused["yes"] = False
        core.edit(RUNNING, [_items(ITEMS // 2)], SYSTEM)
        assert _ids(core) == set(range(ITEMS // 2))
    with Core(test_schema, state, settings=settings) as reopened:
        assert _ids(reopened) == set(range(ITEMS // 2))


def test_an_invalid_large_edit_is_refused_and_changes_nothing(
    held: tuple[Core, HeldDisk, list[Change]],
) -> None:
    core, _, seen = held
    bad = _items(ITEMS)
    document = json.loads(bad.value or "{}")
    document["core-test:top"]["item"][7]["pool"] = "nowhere"  # a dangling leafref
    with pytest.raises(CatsError):
        core.edit(RUNNING, [Edit(EditOperation.MERGE, TOP, json.dumps(document))], SYSTEM)
    assert _ids(core) == set()
    assert not seen


def test_an_edit_past_the_bound_is_refused_before_it_is_parsed(
    held: tuple[Core, HeldDisk, list[Change]],
) -> None:
    core, _, _ = held
    with pytest.raises(CatsError) as raised:
        core.edit(RUNNING, [_items(3000)], SYSTEM)
    (item,) = raised.value.items
    assert item.tag == "too-big"
    assert "--max-edit-nodes" in item.message
    assert _ids(core) == set()


def test_the_size_of_an_edit_is_counted_in_both_encodings() -> None:
    xml = "<top xmlns='urn:x'><item><id>1</id></item><item><id>2</id></item></top>"
    assert edit_nodes([Edit(EditOperation.MERGE, TOP, xml, Encoding.XML)]) == 5
    assert edit_nodes([_items(3)]) == 4 + 3 * 4  # top, pool, its name, item; the items
