"""Reads: operational state, filters, depth, fields, defaults, origin, revisions, access."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.datastore import Core
from controller.datastore.api import (
    SYSTEM,
    Content,
    DatastoreName,
    Edit,
    EditOperation,
    Principal,
    ReadRequest,
    Registrations,
    WithDefaults,
)
from controller.errors import CatsError
from controller.model import Encoding, Schema
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
)

OPERATIONAL = DatastoreName.OPERATIONAL


def read(core: Core, request: ReadRequest) -> object:
    document = core.read(request, SYSTEM).document
    return None if document is None else json.loads(document)


@pytest.fixture
def with_status(registrations: Registrations) -> None:
    registrations.state[DataPath("/core-test:status")] = lambda: {
        "core-test:status": {"uptime": 42}
    }


def test_state_providers_appear_in_operational(with_status: None, core: Core) -> None:
    assert read(core, ReadRequest(OPERATIONAL, DataPath("/core-test:status"))) == {
        "core-test:status": {"uptime": 42}
    }
    whole = read(core, ReadRequest(OPERATIONAL))
    assert isinstance(whole, dict)
    assert {"core-test:status", "core-test:top", "ietf-yang-library:yang-library"} <= set(whole)
    config = read(core, ReadRequest(OPERATIONAL, content=Content.CONFIG))
    assert isinstance(config, dict)
    assert "core-test:status" not in config
    state = read(core, ReadRequest(OPERATIONAL, content=Content.NONCONFIG))
    assert isinstance(state, dict)
    assert "core-test:top" not in state


def test_yang_library_lists_the_modules_and_a_content_id(core: Core) -> None:
    found = read(core, ReadRequest(OPERATIONAL, DataPath("/ietf-yang-library:yang-library")))
    assert isinstance(found, dict)
    library = found["ietf-yang-library:yang-library"]
    names = {module["name"] for module in library["module-set"][0]["module"]}
    assert {"core-test", "ietf-cats-types", "ietf-netconf-acm", "ietf-yang-patch"} <= names
    assert len(library["content-id"]) == 32
    assert {d["name"] for d in library["datastore"]} >= {"ietf-datastores:running"}


def test_origin_metadata(with_status: None, core: Core) -> None:
    found = read(core, ReadRequest(OPERATIONAL, DataPath("/core-test:status"), with_origin=True))
    assert isinstance(found, dict)
    assert found["core-test:status"]["@"] == {"ietf-origin:origin": "ietf-origin:learned"}
    found = read(core, ReadRequest(OPERATIONAL, TOP, with_origin=True))
    assert isinstance(found, dict)
    assert found["core-test:top"]["@"] == {"ietf-origin:origin": "ietf-origin:intended"}


def test_with_defaults_depth_fields_and_xpath(core: Core) -> None:
    explicit = read(core, ReadRequest(RUNNING, DataPath(f"{TOP}/mode")))
    assert explicit is None or explicit == {}
    assert read(
        core, ReadRequest(RUNNING, DataPath(f"{TOP}/mode"), with_defaults=WithDefaults.REPORT_ALL)
    ) == {"core-test:mode": "fast"}
    shallow = read(core, ReadRequest(RUNNING, TOP, depth=2))
    assert isinstance(shallow, dict)
    assert shallow["core-test:top"]["item"] == [{"id": 1}]
    picked = read(core, ReadRequest(RUNNING, item_path(1), fields="name;pool"))
    assert picked == {"core-test:item": [{"id": 1, "name": "i1", "pool": "p1"}]}
    filtered = read(core, ReadRequest(RUNNING, xpath_filter=f"{TOP}/item[addr='a1']/name"))
    assert filtered == {"core-test:top": {"item": [{"id": 1, "name": "i1"}]}}
    xml = core.read(ReadRequest(RUNNING, item_path(1), encoding=Encoding.XML), SYSTEM).document
    assert xml is not None
    assert xml.startswith("<item")


def test_depth_counts_the_target_as_level_one(core: Core) -> None:
    """RFC 8040 4.8.2: ``depth=1`` returns the target itself; keys go with their entry."""
    core.edit(RUNNING, [merge(TOP, {"label": "L"})], SYSTEM)
    assert read(core, ReadRequest(RUNNING, TOP, depth=1)) == {"core-test:top": {}}
    xml = core.read(ReadRequest(RUNNING, TOP, depth=1, encoding=Encoding.XML), SYSTEM).document
    assert xml == '<top xmlns="urn:example:core-test"/>'
    two = read(core, ReadRequest(RUNNING, TOP, depth=2))
    assert two == {
        "core-test:top": {
            "label": "L",
            "pool": [{"name": "p1"}, {"name": "p2"}],
            "item": [{"id": 1}],
        }
    }
    assert read(core, ReadRequest(RUNNING, item_path(1), depth=1)) == {
        "core-test:item": [{"id": 1}]
    }
    assert read(core, ReadRequest(RUNNING, item_path(1), depth=2)) == {"core-test:item": [item(1)]}
    assert read(core, ReadRequest(RUNNING, DataPath(f"{TOP}/label"), depth=1)) == {
        "core-test:label": "L"
    }
    assert read(core, ReadRequest(RUNNING, DataPath(f"{TOP}/item[id='9']"), depth=1)) is None


def test_depth_of_the_datastore_root(with_status: None, core: Core) -> None:
    """The datastore is level 1, so depth=1 has no top-level node and depth=2 only those."""
    assert read(core, ReadRequest(RUNNING, depth=1)) == {}
    assert read(core, ReadRequest(RUNNING, depth=2)) == {"core-test:top": {}}
    third = read(core, ReadRequest(RUNNING, depth=3))
    assert isinstance(third, dict)
    assert third["core-test:top"]["item"] == [{"id": 1}]
    assert read(core, ReadRequest(OPERATIONAL, depth=1)) == {}
    tops = read(core, ReadRequest(OPERATIONAL, depth=2))
    assert isinstance(tops, dict)
    assert tops["core-test:top"] == {}
    assert tops["core-test:status"] == {}
    assert tops["ietf-yang-library:yang-library"] == {}


def test_depth_with_fields_starts_at_the_selected_nodes(core: Core) -> None:
    """RFC 8040 4.8.2: nodes ``fields`` selects, and their ancestors, are level 1."""
    picked = read(core, ReadRequest(RUNNING, TOP, fields="item", depth=1))
    assert picked == {"core-test:top": {"item": [{"id": 1}]}}
    picked = read(core, ReadRequest(RUNNING, TOP, fields="item;item/name", depth=1))
    assert picked == {"core-test:top": {"item": [{"id": 1, "name": "i1"}]}}
    picked = read(core, ReadRequest(RUNNING, TOP, fields="item", depth=2))
    assert picked == {"core-test:top": {"item": [item(1)]}}


def test_revisions_change_for_the_node_and_ancestors_not_siblings(core: Core) -> None:
    core.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM)
    before = {path: core.revision(RUNNING, path) for path in (item_path(1), item_path(2), TOP)}
    whole_before = core.revision(RUNNING, None)
    core.edit(RUNNING, [merge(item_path(2), {"id": 2, "lo": 1})], SYSTEM)
    assert core.revision(RUNNING, item_path(1)) == before[item_path(1)]
    assert core.revision(RUNNING, item_path(2)) != before[item_path(2)]
    assert core.revision(RUNNING, TOP) != before[TOP]
    assert core.revision(RUNNING, None) != whole_before
    assert core.revision(RUNNING, DataPath(f"{item_path(2)}/lo")) != before[item_path(2)]
    name_before = core.revision(RUNNING, DataPath(f"{item_path(2)}/name"))
    core.edit(
        RUNNING,
        [Edit(EditOperation.REPLACE, item_path(2), json.dumps({"core-test:item": [item(2)]}))],
        SYSTEM,
    )
    assert core.revision(RUNNING, DataPath(f"{item_path(2)}/name")) != name_before
    assert core.read(ReadRequest(RUNNING, item_path(2)), SYSTEM).revision == core.revision(
        RUNNING, item_path(2)
    )


def test_a_replaced_datastore_gives_every_path_a_new_revision(core: Core) -> None:
    before = core.revision(RUNNING, item_path(1))
    assert core.revision(RUNNING, item_path(1)) == before  # asked twice, the same
    whole = core.read(ReadRequest(RUNNING, None), SYSTEM).document
    assert whole is not None
    core.edit(RUNNING, [Edit(EditOperation.REPLACE, DataPath("/"), whole)], SYSTEM)
    assert core.revision(RUNNING, item_path(1)) != before


def test_every_request_passes_access_control(test_schema: Schema, tmp_path: Path) -> None:
    """Writes, reads and operations of a user all go through NACM (RFC 8341 3.4)."""
    bob = Principal("bob")
    rules = (
        nacm_rule("no-item-writes", "deny", access="create update delete", path=f"{TOP}/item"),
        nacm_rule("no-pools", "deny", access="read", path=f"{TOP}/pool"),
        nacm_rule("no-add", "deny", access="exec", rpc_name="add"),
        nacm_rule("the-rest", "permit"),
    )
    with Core(test_schema, tmp_path) as opened:
        opened.edit(RUNNING, [nacm_policy("bob", *rules)], SYSTEM)
        opened.edit(RUNNING, [create(f"{TOP}/pool[name='p1']", {"name": "p1"})], SYSTEM)
        with pytest.raises(CatsError) as caught:
            opened.edit(RUNNING, [create(item_path(1), item(1))], bob)
        assert caught.value.items[0].tag == "access-denied"
        assert opened.read(ReadRequest(RUNNING, item_path(1)), bob).document is None
        assert (
            opened.read(ReadRequest(RUNNING, DataPath(f"{TOP}/pool[name='p1']")), bob).document
            is None
        )
        with pytest.raises(CatsError) as rpc:
            opened.invoke(
                DataPath("/core-test:add"), '{"core-test:input": {"a": 1}}', Encoding.JSON, bob
            )
        assert rpc.value.items[0].tag == "access-denied"
        assert opened.authorization.nacm.counters.denied_operations == 1


@pytest.fixture
def live_uptime(registrations: Registrations) -> list[int]:
    """A state provider whose value the test changes."""
    uptime = [1]
    registrations.state[DataPath("/core-test:status")] = lambda: {
        "core-test:status": {"uptime": uptime[0]}
    }
    return uptime


def test_state_revision_changes_with_the_state(live_uptime: list[int], core: Core) -> None:
    path = DataPath("/core-test:status")
    first = core.read(ReadRequest(OPERATIONAL, path), SYSTEM).revision
    assert core.revision(OPERATIONAL, path).etag == first.etag
    live_uptime[0] = 2
    second = core.revision(OPERATIONAL, path)
    assert second.etag != first.etag
    assert core.read(ReadRequest(OPERATIONAL, path), SYSTEM).revision.etag == second.etag
