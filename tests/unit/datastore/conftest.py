"""Fixtures of the server core tests: a schema with the test modules and a fresh core."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.datastore import Core, CoreSettings
from controller.datastore.api import (
    SYSTEM,
    DatastoreName,
    Edit,
    EditOperation,
    ReadRequest,
    Registrations,
)
from controller.model import Schema, nodes
from controller.model.schema import Encoding
from controller.types import DataPath

TEST_YANG = Path(__file__).resolve().parents[2] / "yang"
TOP = DataPath("/core-test:top")
RUNNING = DatastoreName.RUNNING


@pytest.fixture(scope="session")
def test_schema() -> Iterator[Schema]:
    """The server's modules plus core-test and bench-list."""
    with Schema.for_server([TEST_YANG]) as compiled:
        yield compiled


@pytest.fixture(params=[True, False], ids=["local", "full"])
def settings(request: pytest.FixtureRequest) -> CoreSettings:
    """Both validation paths: every behaviour must be the same."""
    return CoreSettings(incremental=bool(request.param))


@pytest.fixture
def registrations() -> Registrations:
    """Empty registrations a test may fill before asking for ``core``."""
    return Registrations()


@pytest.fixture
def core(
    test_schema: Schema, tmp_path: Path, registrations: Registrations, settings: CoreSettings
) -> Iterator[Core]:
    """A core on an empty state directory, with two pools and one item."""
    with Core(test_schema, tmp_path / "state", registrations, settings=settings) as opened:
        opened.edit(RUNNING, [merge(TOP, {"pool": [{"name": "p1"}, {"name": "p2"}]})], SYSTEM)
        opened.edit(RUNNING, [create(item_path(1), item(1))], SYSTEM)
        yield opened


def item_path(key: int) -> DataPath:
    """Data path of an item."""
    return DataPath(f"{TOP}/item[id='{key}']")


def item(key: int, **changes: object) -> dict[str, object]:
    """A valid item; ``name=None`` leaves the mandatory leaf out."""
    value: dict[str, object] = {"id": key, "name": f"i{key}", "addr": f"a{key}", "pool": "p1"}
    value.update(changes)
    return {key_: v for key_, v in value.items() if v is not None}


def document(path: str, value: dict[str, object]) -> str:
    """The RFC 7951 document of the node at ``path`` (a list entry or a container)."""
    name = path.rsplit("/", 1)[1].split("[", 1)[0]
    qualified = name if ":" in name else f"core-test:{name}"
    is_entry = path.endswith("]")
    return json.dumps({qualified: [value] if is_entry else value})


def create(path: str, value: dict[str, object]) -> Edit:
    """A create edit."""
    return Edit(EditOperation.CREATE, DataPath(path), document(path, value))


def merge(path: str, value: dict[str, object]) -> Edit:
    """A merge edit."""
    return Edit(EditOperation.MERGE, DataPath(path), document(path, value))


def read_json(core: Core, path: str | None, datastore: DatastoreName = RUNNING) -> object:
    """The parsed document at a path (None when absent)."""
    request = ReadRequest(datastore, None if path is None else DataPath(path))
    result = core.read(request, SYSTEM)
    return None if result.document is None else json.loads(result.document)


def nacm_rule(name: str, action: str, *, access: str = "*", **target: str) -> dict[str, str]:
    """One NACM rule (``path``, ``rpc_name``, ... as keyword arguments)."""
    rule = {"name": name, "module-name": "*", "access-operations": access, "action": action}
    rule.update({key.replace("_", "-"): value for key, value in target.items()})
    return rule


def nacm_policy(user: str, *rules: dict[str, str]) -> Edit:
    """An edit that puts ``user`` in its own group, with ``rules`` as that group's rule-list
    (RFC 8341), as the server's own action would."""
    policy = {
        "groups": {"group": [{"name": f"{user}-group", "user-name": [user]}]},
        "rule-list": [{"name": f"{user}-rules", "group": [f"{user}-group"], "rule": list(rules)}],
    }
    return Edit(
        EditOperation.MERGE,
        DataPath("/ietf-netconf-acm:nacm"),
        json.dumps({"ietf-netconf-acm:nacm": policy}),
    )


def invalid_lyb(test_schema: Schema) -> bytes:
    """A LYB document of an item without its mandatory name (parsed, never validated)."""
    ctx = test_schema.context.cdata
    text = json.dumps({"core-test:top": {"item": [{"id": 1}]}})
    tree = nodes.parse_data(ctx, text, Encoding.JSON)
    try:
        return nodes.print_lyb(tree)
    finally:
        nodes.free_all(tree)
