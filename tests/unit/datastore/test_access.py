"""controller.datastore.access: per-node write checks and filtered reads (RFC 8341 3.4.5)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.datastore import Core
from controller.datastore.api import (
    SYSTEM,
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
    nacm_policy,
    nacm_rule,
    read_json,
)

ALICE = Principal("alice")
ADDR_1 = f"{item_path(1)}/addr"
ADDR_2 = f"{item_path(2)}/addr"
HIDDEN_KEY = f"{TOP}/pool[name='p2']/name"
#: Alice may do everything but these (RFC 8341 rules, in order; the last permits the rest).
RULES = (
    nacm_rule("no-create-addr-2", "deny", access="create", path=ADDR_2),
    nacm_rule("addr-1-fixed", "deny", access="update delete read", path=ADDR_1),
    nacm_rule("hide-p2", "deny", access="read", path=HIDDEN_KEY),
    nacm_rule("the-rest", "permit"),
)


@pytest.fixture
def guarded(test_schema: Schema, tmp_path: Path) -> Iterator[Core]:
    """A core with Alice's rules, two pools and item 1."""
    with Core(test_schema, tmp_path / "state") as opened:
        opened.edit(RUNNING, [nacm_policy("alice", *RULES)], SYSTEM)
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
    assert '"addr":"a1"' not in whole.replace(" ", "")
    assert "a1" in (guarded.read(ReadRequest(RUNNING, TOP), SYSTEM).document or "")


def test_an_unreadable_target_reads_as_absent(guarded: Core) -> None:
    """RFC 8341 3.4.5 step 7: denied data is simply not returned (its existence neither)."""
    assert guarded.read(ReadRequest(RUNNING, DataPath(ADDR_1)), ALICE).document is None
    assert guarded.read(ReadRequest(RUNNING, DataPath(ADDR_1)), SYSTEM).document is not None


def test_denied_writes_are_counted(guarded: Core) -> None:
    before = guarded.authorization.nacm.counters.denied_data_writes
    refused_at(guarded, Edit(EditOperation.DELETE, item_path(1)))
    assert guarded.authorization.nacm.counters.denied_data_writes == before + 1


def test_nacm_off_skips_per_node_work(guarded: Core) -> None:
    assert guarded.per_node
    off = json.dumps({"ietf-netconf-acm:nacm": {"enable-nacm": False}})
    guarded.edit(
        RUNNING, [Edit(EditOperation.MERGE, DataPath("/ietf-netconf-acm:nacm"), off)], SYSTEM
    )
    assert not guarded.per_node
    guarded.edit(RUNNING, [Edit(EditOperation.DELETE, item_path(1))], ALICE)  # nothing checks


def test_a_restricted_read_leaves_the_datastore_as_it_was(guarded: Core) -> None:
    """The nodes hidden from Alice's reads are back, where they were, for everyone else."""
    before = read_json(guarded, None)
    for _ in range(2):
        guarded.read(ReadRequest(RUNNING), ALICE)
        guarded.read(ReadRequest(RUNNING, TOP), ALICE)
        guarded.read(ReadRequest(RUNNING, DataPath(ADDR_1)), ALICE)
    assert read_json(guarded, None) == before


def test_hidden_entries_of_a_user_ordered_list_go_back_in_order(
    test_schema: Schema, tmp_path: Path
) -> None:
    hops = [{"name": f"h{n}", "cost": n} for n in range(5)]
    path = "/rc-test:top/hop[name='h2']"
    rules = (nacm_rule("no-h2", "deny", access="read", path=path), nacm_rule("rest", "permit"))
    with Core(test_schema, tmp_path / "state") as core:
        core.edit(RUNNING, [nacm_policy("alice", *rules)], SYSTEM)
        core.edit(RUNNING, [merge("/rc-test:top", {"hop": hops})], SYSTEM)
        seen = json.loads(
            core.read(ReadRequest(RUNNING, DataPath("/rc-test:top")), ALICE).document or "{}"
        )
        assert [h["name"] for h in seen["rc-test:top"]["hop"]] == ["h0", "h1", "h3", "h4"]
        after = read_json(core, "/rc-test:top")
        assert [h["name"] for h in after["rc-test:top"]["hop"]] == ["h0", "h1", "h2", "h3", "h4"]  # type: ignore[index]
