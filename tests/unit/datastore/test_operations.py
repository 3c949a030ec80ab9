"""controller.datastore.operations and error paths: what the NETCONF layer needs of the core."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation
from controller.errors import CatsError
from controller.model import Schema
from controller.model.schema import Encoding
from controller.types import DataPath
from tests.unit.datastore.conftest import RUNNING, read_json

M = "shapes-test"
NS = "urn:example:shapes-test"
POOLS = Edit(
    EditOperation.MERGE,
    DataPath(f"/{M}:pools"),
    json.dumps({f"{M}:pools": {"pool": [{"name": "p1"}]}}),
)


@pytest.fixture
def shapes(test_schema: Schema, tmp_path: Path, settings: CoreSettings) -> Iterator[Core]:
    """A core (both validation paths) with a pool and a host ``a`` at ``addr`` x."""
    with Core(test_schema, tmp_path / "state", settings=settings) as opened:
        opened.edit(
            RUNNING, [POOLS, _create("host", {"name": "a", "label": "L", "addr": "x"})], SYSTEM
        )
        yield opened


def _create(name: str, entry: dict[str, object]) -> Edit:
    key = "name" if name == "host" else "id"
    path = DataPath(f"/{M}:{name}[{key}='{entry[key]}']")
    return Edit(EditOperation.CREATE, path, json.dumps({f"{M}:{name}": [entry]}))


def _refusal(core: Core, edits: list[Edit]) -> tuple[str, str | None, str | None]:
    with pytest.raises(CatsError) as caught:
        core.edit(RUNNING, edits, SYSTEM)
    item = caught.value.items[0]
    return item.tag, item.app_tag, item.path


CASES = {
    "mandatory leaf": (
        [_create("host", {"name": "b"})],
        ("missing-element", None, f"/{M}:host[name='b']/label"),
    ),
    "mandatory leaf in a nested entry": (
        [_create("site", {"id": 2, "name": "n", "link": [{"peer": "x"}]})],
        ("missing-element", None, f"/{M}:site[id='2']/link[peer='x']/port"),
    ),
    "mandatory leaf at a root replace": (
        [Edit(EditOperation.REPLACE, DataPath("/"), json.dumps({f"{M}:host": [{"name": "z"}]}))],
        ("missing-element", None, f"/{M}:host[name='z']/label"),
    ),
    "dangling leafref": (
        [_create("host", {"name": "c", "label": "L", "pool": "nope"})],
        ("data-missing", "instance-required", f"/{M}:host[name='c']/pool"),
    ),
    "duplicate unique": (
        [_create("host", {"name": "d", "label": "L", "addr": "x"})],
        ("operation-failed", "data-not-unique", f"/{M}:host[name='d']"),
    ),
    "must": (
        [
            _create(
                "site", {"id": 3, "name": "n", "link": [{"peer": "x", "port": 1, "lo": 5, "hi": 1}]}
            )
        ],
        ("operation-failed", "must-violation", f"/{M}:site[id='3']/link[peer='x']/hi"),
    ),
    "missing key": (
        [
            Edit(
                EditOperation.MERGE,
                DataPath(f"/{M}:pools"),
                json.dumps({f"{M}:pools": {"pool": [{}]}}),
            )
        ],
        ("missing-element", None, f"/{M}:pools/pool"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_errors_name_the_data_node(shapes: Core, case: str) -> None:
    edits, expected = CASES[case]
    assert _refusal(shapes, edits) == expected


def test_restore_passes_locks_and_is_notified(shapes: Core) -> None:
    shapes.lock(RUNNING, "7")
    assert shapes.lock_holders() == {RUNNING: "7"}
    subscription = shapes.subscribe("NETCONF")
    document = json.dumps({f"{M}:pools": {"pool": [{"name": "p2"}]}})
    shapes.restore(RUNNING, document, Encoding.JSON)
    subscription.close()
    assert read_json(shapes, f"/{M}:host[name='a']") is None
    assert read_json(shapes, f"/{M}:pools/pool[name='p2']") is not None
    (event,) = [json.loads(n.document) for n in subscription]
    change = event["ietf-netconf-notifications:netconf-config-change"]
    assert change["changed-by"]["username"] == SYSTEM.user
    with pytest.raises(CatsError) as caught:  # all or nothing, validated
        shapes.restore(RUNNING, json.dumps({f"{M}:host": [{"name": "z"}]}), Encoding.JSON)
    assert caught.value.items[0].tag == "missing-element"
    assert read_json(shapes, f"/{M}:pools/pool[name='p2']") is not None
    shapes.release_session("7")
    assert shapes.lock_holders() == {}


def test_restore_refuses_operational(shapes: Core) -> None:
    with pytest.raises(CatsError):
        shapes.restore(DatastoreName.OPERATIONAL, "{}", Encoding.JSON)


def test_root_replace_takes_several_xml_elements(shapes: Core) -> None:
    document = (
        f'<pools xmlns="{NS}"><pool><name>p1</name></pool></pools>'
        f'<host xmlns="{NS}"><name>q</name><label>l</label><pool>p1</pool></host>'
        f'<motd xmlns="{NS}">hi</motd>'
    )
    shapes.edit(
        RUNNING, [Edit(EditOperation.REPLACE, DataPath("/"), document, Encoding.XML)], SYSTEM
    )
    assert read_json(shapes, f"/{M}:host[name='a']") is None
    assert read_json(shapes, f"/{M}:host[name='q']") is not None
    assert read_json(shapes, f"/{M}:motd") == {f"{M}:motd": "hi"}
