"""controller.datastore.access: per-node write checks and filtered reads (RFC 8341 3.4.5)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.datastore import Core
from controller.datastore.api import (
    SYSTEM,
    Access,
    Edit,
    EditOperation,
    Principal,
    ReadRequest,
)
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

ALICE = Principal("alice")
ADDR_1 = f"{item_path(1)}/addr"
ADDR_2 = f"{item_path(2)}/addr"
HIDDEN_KEY = f"{TOP}/pool[name='p2']/name"
DENIED = {
    (Access.CREATE, ADDR_2),
    (Access.UPDATE, ADDR_1),
    (Access.DELETE, ADDR_1),
    (Access.READ, ADDR_1),
    (Access.READ, HIDDEN_KEY),
}


def nacm(principal: Principal, access: Access, path: str) -> bool:
    """Alice may do everything but the accesses in DENIED."""
    return principal != ALICE or (access, path) not in DENIED


@pytest.fixture
def guarded(test_schema: Schema, tmp_path: Path) -> Iterator[Core]:
    """A core with the test access check, two pools and item 1."""
    with Core(test_schema, tmp_path / "state", access=nacm) as opened:
        opened.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}, {"name": "p2"}]})], SYSTEM)
        opened.edit(RUNNING, [create(item_path(1), item(1))], SYSTEM)
        yield opened


def refused_at(core: Core, edit: Edit) -> str | None:
    """The path of the access-denied error an edit by Alice gets."""
    with pytest.raises(CatsError) as caught:
        core.edit(RUNNING, [edit], ALICE)
    assert caught.value.items[0].tag == "access-denied"
    return caught.value.items[0].path


def test_a_create_with_one_denied_node_inside_is_refused(guarded: Core) -> None:
    before = read_json(guarded, TOP)
    assert refused_at(guarded, create(item_path(2), item(2))) == ADDR_2
    assert read_json(guarded, TOP) == before
    guarded.edit(RUNNING, [create(item_path(2), item(2, addr=None))], ALICE)  # no addr: fine


def test_a_merge_that_changes_a_denied_leaf_is_refused(guarded: Core) -> None:
    before = read_json(guarded, TOP)
    assert refused_at(guarded, merge(item_path(1), item(1, addr="new"))) == ADDR_1
    assert read_json(guarded, TOP) == before
    guarded.edit(RUNNING, [merge(item_path(1), item(1, name="renamed"))], ALICE)  # addr same


def test_a_replace_that_drops_a_denied_leaf_is_refused(guarded: Core) -> None:
    before = read_json(guarded, TOP)
    value = json.dumps({"core-test:item": [item(1, addr=None)]})
    replace = Edit(EditOperation.REPLACE, item_path(1), value)
    assert refused_at(guarded, replace) == ADDR_1
    assert read_json(guarded, TOP) == before


def test_a_delete_of_a_subtree_holding_a_denied_node_is_refused(guarded: Core) -> None:
    before = read_json(guarded, TOP)
    assert refused_at(guarded, Edit(EditOperation.DELETE, item_path(1))) == ADDR_1
    assert refused_at(guarded, Edit(EditOperation.DELETE, TOP)) == ADDR_1
    assert read_json(guarded, TOP) == before


def test_a_replace_of_the_whole_datastore_is_checked_per_node(guarded: Core) -> None:
    before = read_json(guarded, TOP)
    assert refused_at(guarded, Edit(EditOperation.REPLACE, DataPath("/"), "{}")) == ADDR_1
    assert read_json(guarded, TOP) == before


def test_a_read_leaves_out_what_may_not_be_read(guarded: Core) -> None:
    found = guarded.read(ReadRequest(RUNNING, TOP), ALICE).document
    assert found is not None
    top = json.loads(found)["core-test:top"]
    assert top["item"] == [{"id": 1, "name": "i1", "pool": "p1"}]  # no addr
    assert top["pool"] == [{"name": "p1"}]  # p2's key is unreadable: the entry goes
    whole = guarded.read(ReadRequest(RUNNING), ALICE).document
    assert whole is not None
    assert "addr" not in whole
    assert "a1" in (guarded.read(ReadRequest(RUNNING, TOP), SYSTEM).document or "")


def test_a_read_of_an_unreadable_target_is_refused(guarded: Core) -> None:
    with pytest.raises(CatsError) as caught:
        guarded.read(ReadRequest(RUNNING, DataPath(ADDR_1)), ALICE)
    assert caught.value.items[0].tag == "access-denied"


def test_the_default_check_skips_per_node_work(guarded: Core, test_schema: Schema) -> None:
    assert guarded.per_node
    with Core(test_schema, None) as default:
        assert not default.per_node
