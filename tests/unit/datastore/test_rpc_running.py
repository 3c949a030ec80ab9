"""controller.datastore.rpc.reads_running, Core.invoke and Core.publish: an RPC's input or
output, or a notification, that can read running is validated against running (under the core
lock); the rest without a dependency tree, with the same answers (RFC 7950 7.14.2, 7.16.2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.datastore import Core
from controller.datastore import rpc as operations
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation, Registrations
from controller.errors import CatsError
from controller.model import Encoding, Schema, nodes
from controller.types import DataPath, SchemaPath

OPERATIONS_YANG = Path(__file__).resolve().parents[2] / "yang" / "operations"
M = "rpc-deps"
RESERVE, SPAN, LOOKUP = f"/{M}:reserve", f"/{M}:span", f"/{M}:lookup"
REPORT = "/ietf-cats-service-metrics:report-service-metrics"


@pytest.fixture(scope="module")
def schema() -> Iterator[Schema]:
    """The server's modules plus rpc-deps."""
    with Schema.for_server([OPERATIONS_YANG]) as compiled:
        yield compiled


@pytest.fixture
def answers() -> list[str]:
    """The pools lookup answers with, the last one first."""
    return []


@pytest.fixture
def core(schema: Schema, tmp_path: Path, answers: list[str]) -> Iterator[Core]:
    """A core whose handlers answer: reserve with nothing, span with the length, lookup with
    the last of ``answers``."""
    registrations = Registrations()
    registrations.rpcs[SchemaPath(RESERVE)] = lambda principal, members: {}
    registrations.rpcs[SchemaPath(SPAN)] = lambda principal, members: {
        "length": int(str(members["last"])) - int(str(members["first"]))
    }
    registrations.rpcs[SchemaPath(LOOKUP)] = lambda principal, members: {"pool": answers[-1]}
    with Core(schema, tmp_path / "state", registrations) as opened:
        yield opened


def configure(core: Core, pools: list[str], max_count: int | None = None) -> None:
    """Replace rpc-deps:pools in running."""
    value: dict[str, object] = {"pool": [{"name": name} for name in pools]}
    if max_count is not None:
        value["max-count"] = max_count
    edit = Edit(EditOperation.REPLACE, DataPath(f"/{M}:pools"), json.dumps({f"{M}:pools": value}))
    core.edit(DatastoreName.RUNNING, [edit], SYSTEM)


def invoke(core: Core, path: str, members: dict[str, object]) -> object:
    """The output members of one JSON invocation."""
    text = core.invoke(DataPath(path), json.dumps({f"{M}:input": members}), Encoding.JSON, SYSTEM)
    return json.loads(text)[f"{M}:output"] if text else {}


def refused(core: Core, path: str, members: dict[str, object]) -> CatsError:
    """The error an invocation is refused with."""
    with pytest.raises(CatsError) as caught:
        invoke(core, path, members)
    return caught.value


def test_whether_a_part_reads_running_is_decided_from_the_schema(schema: Schema) -> None:
    ctx = schema.context.cdata
    flags = {
        path: (op.input_reads_running, op.output_reads_running)
        for path in (RESERVE, SPAN, LOOKUP, REPORT)
        for op in [operations.resolve(ctx, DataPath(path))]
    }
    assert flags == {
        RESERVE: (True, False),  # leafref and must into running
        SPAN: (False, False),  # a local must and a leafref between input leaves
        LOOKUP: (False, True),  # an output leafref into running
        REPORT: (False, False),  # its only must reads the report itself
    }


def test_input_that_reads_running_is_validated_against_running(core: Core) -> None:
    assert refused(core, RESERVE, {"pool": "p1"}).items[0].tag == "data-missing"
    configure(core, ["p1"], max_count=5)
    assert invoke(core, RESERVE, {"pool": "p1", "count": 5}) == {}
    above = refused(core, RESERVE, {"pool": "p1", "count": 9})
    assert above.items[0].app_tag == "count-above-max"
    configure(core, ["p1", "p2"], max_count=10)  # a later running is the one validated against
    assert invoke(core, RESERVE, {"pool": "p2", "count": 9}) == {}
    configure(core, ["p2"])
    assert refused(core, RESERVE, {"pool": "p1"}).items[0].tag == "data-missing"


def test_input_that_reads_only_itself_is_still_validated(core: Core) -> None:
    assert invoke(core, SPAN, {"first": 2, "last": 5}) == {"length": 3}
    below = refused(core, SPAN, {"first": 5, "last": 2})
    assert below.items[0].app_tag == "last-below-first"
    assert invoke(core, SPAN, {"first": 1, "last": 1, "mark": [4, 7], "chosen": 7}) == {"length": 0}
    assert refused(core, SPAN, {"first": 1, "last": 1, "mark": [4], "chosen": 7}).items


def test_output_that_reads_running_is_validated_against_running(
    core: Core, answers: list[str]
) -> None:
    answers.append("p1")
    assert refused(core, LOOKUP, {}).items[0].tag == "operation-failed"  # no pool p1 yet
    configure(core, ["p1"])
    assert invoke(core, LOOKUP, {}) == {"pool": "p1"}
    answers.append("p9")
    assert refused(core, LOOKUP, {}).items[0].tag == "operation-failed"


def test_whether_a_notification_reads_running_is_decided_from_the_schema(schema: Schema) -> None:
    ctx = schema.context.cdata
    found = {
        name: operations.notification_reads_running(
            nodes.lib.lys_find_path(ctx, nodes.ffi.NULL, f"/{name}".encode(), 0)
        )
        for name in (f"{M}:pool-event", f"{M}:tick", "ietf-cats-service-metrics:selection-decision")
    }
    assert found == {
        f"{M}:pool-event": True,
        f"{M}:tick": False,
        "ietf-cats-service-metrics:selection-decision": False,
    }


def test_a_notification_that_reads_running_is_validated_against_running(core: Core) -> None:
    event = json.dumps({f"{M}:pool-event": {"pool": "p1"}})
    with pytest.raises(CatsError):
        core.publish("NETCONF", event)
    configure(core, ["p1"])
    assert json.loads(core.publish("NETCONF", event).document) == json.loads(event)


def test_a_notification_that_reads_only_itself_is_still_validated(core: Core) -> None:
    core.publish("NETCONF", json.dumps({f"{M}:tick": {"count": 2, "limit": 3}}))
    with pytest.raises(CatsError) as caught:
        core.publish("NETCONF", json.dumps({f"{M}:tick": {"count": 3, "limit": 2}}))
    assert caught.value.items[0].app_tag == "limit-below-count"
