"""controller.datastore.core: edits, all-or-nothing transactions, refusals with the right tag."""

from __future__ import annotations

import json

import pytest

from controller.datastore import Core, DatastoreError
from controller.datastore.api import (
    SYSTEM,
    Change,
    Edit,
    EditOperation,
    InsertWhere,
    Registrations,
)
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.types import DataPath
from tests.unit.datastore.conftest import (
    RUNNING,
    TOP,
    create,
    document,
    item,
    item_path,
    merge,
    read_json,
)


def refused(core: Core, *edits: Edit) -> CatsError:
    with pytest.raises(CatsError) as caught:
        core.edit(RUNNING, list(edits), SYSTEM)
    return caught.value


def test_create_then_read(core: Core) -> None:
    core.edit(RUNNING, [create(item_path(2), item(2, lo=3, hi=4))], SYSTEM)
    found = read_json(core, item_path(2))
    assert found == {"core-test:item": [item(2, lo=3, hi=4)]}


def test_create_of_an_existing_node_is_data_exists(core: Core) -> None:
    error = refused(core, create(item_path(1), item(1)))
    assert error.items[0].tag == "data-exists"
    assert error.items[0].path == item_path(1)


def test_delete_of_a_missing_node_is_data_missing_and_remove_is_silent(core: Core) -> None:
    error = refused(core, Edit(EditOperation.DELETE, item_path(9)))
    assert error.items[0].tag == "data-missing"
    core.edit(RUNNING, [Edit(EditOperation.REMOVE, item_path(9))], SYSTEM)
    core.edit(RUNNING, [Edit(EditOperation.DELETE, item_path(1))], SYSTEM)
    assert read_json(core, item_path(1)) is None


def test_merge_keeps_other_leaves_and_replace_drops_them(core: Core) -> None:
    core.edit(RUNNING, [merge(item_path(1), {"id": 1, "lo": 5})], SYSTEM)
    assert read_json(core, item_path(1)) == {"core-test:item": [item(1, lo=5)]}
    core.edit(
        RUNNING,
        [Edit(EditOperation.REPLACE, item_path(1), document(item_path(1), {"id": 1, "name": "n"}))],
        SYSTEM,
    )
    assert read_json(core, item_path(1)) == {"core-test:item": [{"id": 1, "name": "n"}]}


def test_leaf_edit(core: Core) -> None:
    core.edit(
        RUNNING,
        [Edit(EditOperation.MERGE, DataPath(f"{TOP}/label"), '{"core-test:label": "x"}')],
        SYSTEM,
    )
    assert read_json(core, f"{TOP}/label") == {"core-test:label": "x"}
    core.edit(RUNNING, [Edit(EditOperation.DELETE, DataPath(f"{TOP}/label"))], SYSTEM)
    assert read_json(core, f"{TOP}/label") is None


def test_a_failing_second_edit_undoes_the_first(core: Core) -> None:
    before = read_json(core, None)
    error = refused(
        core,
        create(item_path(2), item(2)),
        Edit(EditOperation.DELETE, DataPath(f"{TOP}/pool[name='p2']")),
        create(item_path(1), item(1)),
    )
    assert error.items[0].tag == "data-exists"
    assert read_json(core, None) == before


def test_leafref_unique_mandatory_must_range_refusals(core: Core) -> None:
    cases = [
        (item(2, pool="nope"), "data-missing", "instance-required", "/pool"),
        (item(2, addr="a1"), "operation-failed", "data-not-unique", ""),
        (item(2, name=None), "missing-element", None, ""),
        (item(2, lo=9, hi=3), "operation-failed", "hi-below-lo", "/hi"),
        (item(2, lo=200), "invalid-value", None, "/lo"),
    ]
    before = read_json(core, None)
    for value, tag, app_tag, suffix in cases:
        error = refused(core, create(item_path(2), value))
        first = error.items[0]
        assert (first.tag, first.app_tag) == (tag, app_tag), value
        assert first.path is not None
        assert first.path.startswith(item_path(2) + suffix), (first.path, value)
    assert read_json(core, None) == before


def test_deleting_a_referenced_pool_is_refused(core: Core) -> None:
    error = refused(core, Edit(EditOperation.DELETE, DataPath(f"{TOP}/pool[name='p1']")))
    assert error.items[0].tag == "data-missing"
    assert error.items[0].app_tag == "instance-required"
    assert error.items[0].path == f"{item_path(1)}/pool"  # the leafref left pointing at it
    core.edit(RUNNING, [Edit(EditOperation.DELETE, DataPath(f"{TOP}/pool[name='p2']"))], SYSTEM)


def test_swapping_unique_values_in_one_transaction_is_valid(core: Core) -> None:
    core.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM)
    core.edit(
        RUNNING,
        [
            merge(item_path(1), {"id": 1, "addr": "tmp"}),
            merge(item_path(2), {"id": 2, "addr": "a1"}),
            merge(item_path(1), {"id": 1, "addr": "a2"}),
        ],
        SYSTEM,
    )
    assert read_json(core, f"{item_path(2)}/addr") == {"core-test:addr": "a1"}


def test_non_local_must_falls_back_to_full_validation(core: Core) -> None:
    core.edit(
        RUNNING,
        [Edit(EditOperation.MERGE, DataPath(f"{TOP}/max-limited"), '{"core-test:max-limited": 1}')],
        SYSTEM,
    )
    core.edit(RUNNING, [create(f"{TOP}/limited[id='1']", {"id": 1})], SYSTEM)
    full_before = core.validation_stats().full
    error = refused(core, create(f"{TOP}/limited[id='2']", {"id": 2}))
    assert error.items[0].app_tag == "limited-count"
    assert core.validation_stats().full == full_before + 1


def test_unknown_node_and_mismatched_value(core: Core) -> None:
    error = refused(
        core, Edit(EditOperation.MERGE, DataPath(f"{TOP}/nothing"), '{"core-test:nothing": 1}')
    )
    assert error.items[0].tag == "unknown-element"
    error = refused(core, create(item_path(5), item(6)))
    assert error.items[0].tag == "invalid-value"


AS = "ietf-cats-agent-selection"
CANDIDATES = f"/{AS}:agent-selection/candidates"


@pytest.mark.parametrize(
    "operation", [EditOperation.CREATE, EditOperation.MERGE, EditOperation.REPLACE]
)
def test_a_new_entry_whose_container_is_absent_under_an_existing_top(
    core: Core, operation: EditOperation
) -> None:
    """The top container exists (libyang made it for its defaults), the container between
    it and the list does not: the lookup finds only an ancestor, which is "absent", not a
    path the schema lacks (a RESTCONF PUT of a first candidate was refused so)."""
    path = DataPath(f"{CANDIDATES}/candidate[csci-id='x']")
    value = json.dumps({f"{AS}:candidate": [{"csci-id": "x", "cs-id": "svc"}]})
    core.edit(RUNNING, [Edit(operation, path, value)], SYSTEM)
    assert read_json(core, path) == {f"{AS}:candidate": [{"csci-id": "x", "cs-id": "svc"}]}
    error = refused(core, Edit(EditOperation.MERGE, DataPath(f"{CANDIDATES}/nothing[a='1']"), "{}"))
    assert error.items[0].tag == "unknown-element"


def test_insert_and_move_in_an_ordered_by_user_list(core: Core) -> None:
    def entry(name: str) -> Edit:
        path = DataPath(f"{TOP}/ordered[name='{name}']")
        return Edit(EditOperation.CREATE, path, document(path, {"name": name}))

    core.edit(RUNNING, [entry("a"), entry("b")], SYSTEM)
    first = Edit(
        EditOperation.INSERT,
        DataPath(f"{TOP}/ordered[name='c']"),
        document(f"{TOP}/ordered[name='c']", {"name": "c"}),
        where=InsertWhere.FIRST,
    )
    core.edit(RUNNING, [first], SYSTEM)
    move = Edit(
        EditOperation.MOVE,
        DataPath(f"{TOP}/ordered[name='a']"),
        where=InsertWhere.AFTER,
        point=DataPath(f"{TOP}/ordered[name='b']"),
    )
    core.edit(RUNNING, [move], SYSTEM)
    names = [e["name"] for e in read_top(core)["ordered"]]
    assert names == ["c", "b", "a"]
    before = names
    bad = Edit(EditOperation.MOVE, DataPath(f"{TOP}/ordered[name='c']"), where=InsertWhere.LAST)
    with pytest.raises(DatastoreError):
        core.edit(RUNNING, [bad, create(item_path(1), item(1))], SYSTEM)
    names = [e["name"] for e in read_top(core)["ordered"]]
    assert names == before


def test_replace_and_delete_of_the_whole_datastore(core: Core) -> None:
    whole = json.dumps({"core-test:top": {"pool": [{"name": "q"}]}})
    core.edit(RUNNING, [Edit(EditOperation.REPLACE, DataPath("/"), whole)], SYSTEM)
    assert read_json(core, f"{TOP}/pool[name='q']") is not None
    assert read_json(core, item_path(1)) is None
    core.edit(RUNNING, [create(item_path(3), item(3, pool="q"))], SYSTEM)
    core.edit(RUNNING, [Edit(EditOperation.DELETE, DataPath("/"))], SYSTEM)
    assert read_json(core, item_path(3)) is None


def test_test_only_changes_nothing(core: Core) -> None:
    before = core.revision(RUNNING, None)
    core.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM, test_only=True)
    assert read_json(core, item_path(2)) is None
    assert core.revision(RUNNING, None) == before


def refuse_item_two(change: Change) -> None:
    if any("id='2'" in path for path in change.changed_paths):
        raise CatsError(ErrorItem(ErrorType.APPLICATION, "operation-failed", "no item 2"))


@pytest.fixture
def hooked(registrations: Registrations) -> list[Change]:
    seen: list[Change] = []
    registrations.commit_hooks.extend([refuse_item_two, seen.append])
    return seen


def test_commit_hook_sees_the_change_and_can_refuse_it(hooked: list[Change], core: Core) -> None:
    core.edit(RUNNING, [create(item_path(3), item(3))], SYSTEM)
    change = hooked[-1]
    assert change.changed_paths == (item_path(3),)
    diff = json.loads(change.diff)
    assert diff["core-test:top"]["item"][0]["@"] == {"yang:operation": "create"}
    before = read_json(core, None)
    error = refused(core, create(item_path(4), item(4)), create(item_path(2), item(2)))
    assert error.items[0].message == "no item 2"
    assert read_json(core, None) == before
    assert core.revision(RUNNING, None) == change.revision


def read_top(core: Core) -> dict[str, list[dict[str, str]]]:
    found = read_json(core, TOP)
    assert isinstance(found, dict)
    top: dict[str, list[dict[str, str]]] = found["core-test:top"]
    return top


def test_an_undone_transaction_keeps_the_order_of_a_system_ordered_list(core: Core) -> None:
    for key in (2, 3, 4):
        core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
    before = read_json(core, None)
    assert isinstance(before, dict)
    assert [i["id"] for i in before["core-test:top"]["item"]] == [1, 2, 3, 4]
    error = refused(
        core,
        Edit(EditOperation.DELETE, item_path(1)),
        Edit(EditOperation.DELETE, item_path(2)),
        Edit(EditOperation.REPLACE, item_path(3), document(item_path(3), item(3, lo=7))),
        Edit(EditOperation.DELETE, item_path(4)),
        create(item_path(9), item(9, pool="nope")),  # refused: the whole transaction is undone
    )
    assert error.items[0].tag == "data-missing"
    assert read_json(core, None) == before


def test_an_undone_merge_puts_the_entry_back_as_it_was_where_it_was(core: Core) -> None:
    """A changed entry in the middle of a system-ordered list is put back in place (its
    children swapped for the saved copy's): content, order and later edits as before."""
    for key in (2, 3, 4):
        core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
    before = read_json(core, None)
    changed = item(2, addr="b2", name="renamed")
    error = refused(
        core,
        Edit(EditOperation.MERGE, item_path(2), document(item_path(2), changed)),
        Edit(EditOperation.MERGE, item_path(3), document(item_path(3), item(3, addr="b3"))),
        create(item_path(9), item(9, pool="nope")),  # refused: the whole transaction is undone
    )
    assert error.items[0].tag == "data-missing"
    assert read_json(core, None) == before
    core.edit(
        RUNNING, [Edit(EditOperation.MERGE, item_path(2), document(item_path(2), changed))], SYSTEM
    )
    top = read_top(core)
    assert [int(i["id"]) for i in top["item"]] == [1, 2, 3, 4]  # in place, not at the end
    assert top["item"][1]["addr"] == "b2"


def test_a_replaced_entry_keeps_its_place_and_an_undone_one_comes_back(core: Core) -> None:
    """RFC 6241 replace (RESTCONF PUT) of an entry in the middle of a system-ordered list
    leaves it where it was, with the new content only; a refused transaction that replaced
    entries puts them back as they were, where they were."""
    for key in (2, 3, 4):
        core.edit(RUNNING, [create(item_path(key), item(key))], SYSTEM)
    before = read_json(core, None)
    replaced = item(3, addr="c3", name="whole", pool="p1")

    def replace(key: int, value: dict[str, object]) -> Edit:
        return Edit(EditOperation.REPLACE, item_path(key), document(item_path(key), value))

    error = refused(
        core,
        replace(2, item(2, addr="c2")),
        replace(3, replaced),
        create(item_path(9), item(9, pool="nope")),  # refused: the whole transaction is undone
    )
    assert error.items[0].tag == "data-missing"
    assert read_json(core, None) == before
    core.edit(RUNNING, [replace(3, replaced)], SYSTEM)
    top = read_top(core)
    assert [int(i["id"]) for i in top["item"]] == [1, 2, 3, 4]  # in place, not at the end
    assert top["item"][2] == {"id": 3, "name": "whole", "addr": "c3", "pool": "p1"}
