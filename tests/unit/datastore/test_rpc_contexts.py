"""Twin libyang contexts (controller.datastore.contexts) and the RPC path that borrows them.

An RPC whose validation cannot read running is parsed, validated and printed in a twin of the
core's context, so that concurrent invocations do not queue on one context's dictionary lock;
the answers, the errors and the data must be the same as in the core's own context.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, Principal, Registrations
from controller.datastore.contexts import Contexts
from controller.errors import CatsError
from controller.model import Encoding, Schema, nodes
from controller.types import DataPath, SchemaPath

ADD = "/core-test:add"


def add(principal: Principal, members: dict[str, object]) -> dict[str, object]:
    del principal
    return {"sum": int(str(members["a"])) + int(str(members.get("b", 0)))}


@pytest.fixture(params=[0, 1, 2], ids=["no-twins", "one-twin", "two-twins"])
def core(request: pytest.FixtureRequest, test_schema: Schema, tmp_path: Path) -> Iterator[Core]:
    """A core serving core-test:add with 0, 1 or 2 twin contexts."""
    registrations = Registrations()
    registrations.rpcs[SchemaPath(ADD)] = add
    settings = CoreSettings(parse_contexts=int(request.param))
    with Core(test_schema, tmp_path / "state", registrations, settings=settings) as opened:
        yield opened


def test_a_twin_compiles_the_same_modules_with_the_same_features(test_schema: Schema) -> None:
    with test_schema.twin() as twin:
        assert twin.context.cdata != test_schema.context.cdata
        assert list(twin.implemented_modules()) == list(test_schema.implemented_modules())
        ours = {
            m.name(): sorted(f.name() for f in m.features() if f.state())
            for m in test_schema.context
        }
        theirs = {
            m.name(): sorted(f.name() for f in m.features() if f.state()) for m in twin.context
        }
        assert theirs == ours


def test_borrowers_get_distinct_twins_then_the_main_context(test_schema: Schema) -> None:
    main = test_schema.context.cdata
    pool = Contexts(test_schema, 2)
    try:
        with pool.borrow() as first, pool.borrow() as second, pool.borrow() as third:
            assert len({first, second, main}) == 3  # two twins, neither is the main context
            assert third == main  # every twin is lent: the core's own context
        with pool.borrow() as again:  # returned
            assert again in (first, second)
    finally:
        pool.close()
    assert pool.size == 0


def test_a_twin_lent_during_a_failure_comes_back(test_schema: Schema) -> None:
    pool = Contexts(test_schema, 1)
    try:
        with pytest.raises(RuntimeError), pool.borrow() as lent:
            raise RuntimeError("handler failed")
        with pool.borrow() as again:
            assert again == lent
    finally:
        pool.close()


def test_a_tree_parsed_in_a_twin_belongs_to_the_twin(test_schema: Schema) -> None:
    main = test_schema.context.cdata
    with test_schema.twin() as twin:
        ctx = twin.context.cdata
        text = '{"core-test:add": {"a": 1}}'
        tree, _ = nodes.parse_op(ctx, text, Encoding.JSON, nodes.lib.LYD_TYPE_RPC_YANG)
        try:
            assert not nodes.lib.lyd_validate_op(
                tree, nodes.ffi.NULL, nodes.lib.LYD_TYPE_RPC_YANG, nodes.ffi.NULL
            )
            ours = nodes.lib.lys_find_path(main, nodes.ffi.NULL, ADD.encode(), 0)
            theirs = nodes.lib.lys_find_path(ctx, nodes.ffi.NULL, ADD.encode(), 0)
            assert tree.schema == theirs
            assert tree.schema != ours
        finally:
            nodes.free_all(tree)


@pytest.mark.parametrize(
    "document",
    [
        '{"core-test:input": {"a": 2, "b": 3}}',
        '{"core-test:add": {"a": 2, "b": 3}}',
        '  {\n  "core-test:input" :\n {"a": 2, "b": 3}}\n',
        '{"a": 2, "b": 3}',  # bare members, not in YANG form: still accepted
    ],
)
def test_every_json_form_of_the_input_gives_the_same_reply(core: Core, document: str) -> None:
    reply = core.invoke(DataPath(ADD), document, Encoding.JSON, SYSTEM)
    assert json.loads(reply) == {"core-test:output": {"sum": 5}}


@pytest.mark.parametrize(
    ("document", "tag"),
    [
        ('{"core-test:input": {"a": 2', "malformed-message"),  # cut short
        ('{"core-test:input": {"a": 2}} trailing', "malformed-message"),
        ('{"core-test:input": {"a": 2}, "core-test:nothing": 1}', "unknown-element"),
        ('{"core-test:input": {"b": 2}}', "missing-element"),
        ('{"core-test:input": {"a": "two"}}', "invalid-value"),
        ('{"core-test:input": {"a": 2, "c": 1}}', "unknown-element"),
    ],
)
def test_bad_json_input_is_refused_with_the_proper_tag(core: Core, document: str, tag: str) -> None:
    with pytest.raises(CatsError) as caught:
        core.invoke(DataPath(ADD), document, Encoding.JSON, SYSTEM)
    assert caught.value.items[0].tag == tag


def test_concurrent_invocations_answer_each_their_own(core: Core) -> None:
    """Threads invoking at once (more than there are twins) each get their own sum, and
    their own error for bad input, whichever context parsed it."""
    wrong: list[str] = []

    def worker(offset: int) -> None:
        for number in range(60):
            a = (offset * 7 + number) % 100
            if number % 5 == 0:
                try:
                    core.invoke(
                        DataPath(ADD), f'{{"core-test:input": {{"b": {a}}}}}', Encoding.JSON, SYSTEM
                    )
                    wrong.append(f"missing a accepted ({offset}, {number})")
                except CatsError as exc:
                    if exc.items[0].tag != "missing-element":
                        wrong.append(f"{exc.items[0].tag} for a missing leaf")
                continue
            document = f'{{"core-test:input": {{"a": {a}, "b": {offset}}}}}'
            reply = json.loads(core.invoke(DataPath(ADD), document, Encoding.JSON, SYSTEM))
            if reply != {"core-test:output": {"sum": a + offset}}:
                wrong.append(f"{document} answered {reply}")

    threads = [threading.Thread(target=worker, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_a_notification_known_not_to_read_running_is_checked_in_a_twin_as_strictly(
    core: Core,
) -> None:
    """The first alarm teaches the core that alarm reads no configuration; later ones are
    parsed in a twin and must be printed and refused exactly as the first was."""
    subscription = core.subscribe("NETCONF")
    first = core.publish("NETCONF", '{"core-test:alarm": {"level": 2}}')
    second = core.publish("NETCONF", '{"core-test:alarm": {"level": 2}}')
    assert second.document == first.document
    for bad, tag in (
        ('{"core-test:alarm": {"level": 9}}', "invalid-value"),
        ('{"core-test:alarm": {}}', "missing-element"),
        ('{"core-test:alarm": {"level": 2, "other": 1}}', "unknown-element"),
    ):
        with pytest.raises(CatsError) as caught:
            core.publish("NETCONF", bad)
        assert caught.value.items[0].tag == tag, bad
    third = core.publish("NETCONF", '{"core-test:alarm": {"level": 3}}')
    subscription.close()
    assert [json.loads(n.document) for n in subscription] == [
        {"core-test:alarm": {"level": 2}},
        {"core-test:alarm": {"level": 2}},
        {"core-test:alarm": {"level": 3}},
    ]
    assert third.document != first.document
