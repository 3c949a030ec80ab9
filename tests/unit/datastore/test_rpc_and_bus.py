"""controller.datastore.rpc and bus: validated RPCs, notifications, replay, filters."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest

from controller.datastore import Core
from controller.datastore.api import SYSTEM, Notification, Principal, Registrations
from controller.errors import CatsError
from controller.model import Encoding
from tests.unit.datastore.conftest import RUNNING, create, item, item_path

ADD = "/core-test:add"


def add(principal: Principal, members: dict[str, object]) -> dict[str, object]:
    del principal
    return {"sum": int(str(members["a"])) + int(str(members.get("b", 0)))}


@pytest.fixture
def with_add(registrations: Registrations) -> None:
    registrations.rpcs[ADD] = add


def test_rpc_input_and_output_are_validated(with_add: None, core: Core) -> None:
    reply = core.invoke(ADD, '{"core-test:input": {"a": 2, "b": 3}}', Encoding.JSON, SYSTEM)
    assert json.loads(reply) == {"core-test:output": {"sum": 5}}
    reply = core.invoke(ADD, '{"core-test:add": {"a": 1}}', Encoding.JSON, SYSTEM)
    assert json.loads(reply) == {"core-test:output": {"sum": 1}}
    xml = '<input xmlns="urn:example:core-test"><a>4</a></input>'
    assert "<sum>4</sum>" in core.invoke(ADD, xml, Encoding.XML, SYSTEM)
    with pytest.raises(CatsError) as missing:
        core.invoke(ADD, '{"core-test:input": {"b": 3}}', Encoding.JSON, SYSTEM)
    assert missing.value.items[0].tag == "missing-element"
    with pytest.raises(CatsError) as overflow:  # 200 + 200 does not fit the output's uint8
        core.invoke(ADD, '{"core-test:input": {"a": 200, "b": 200}}', Encoding.JSON, SYSTEM)
    assert overflow.value.items[0].tag == "invalid-value"


def test_unknown_or_unserved_rpc_is_operation_not_supported(core: Core) -> None:
    for path in ("/core-test:nothing", ADD):
        with pytest.raises(CatsError) as caught:
            core.invoke(path, '{"core-test:input": {"a": 1}}', Encoding.JSON, SYSTEM)
        assert caught.value.items[0].tag == "operation-not-supported"


def test_published_notifications_are_validated_and_replayed(core: Core) -> None:
    start = datetime.now(UTC) - timedelta(seconds=1)
    core.publish("NETCONF", '{"core-test:alarm": {"level": 2}}')
    with pytest.raises(CatsError):
        core.publish("NETCONF", '{"core-test:alarm": {"level": 9}}')
    stop = datetime.now(UTC)
    core.publish("NETCONF", '{"core-test:alarm": {"level": 3}}')
    replayed = list(core.subscribe("NETCONF", start_time=start, stop_time=stop))
    documents = [json.loads(n.document) for n in replayed]
    assert {"core-test:alarm": {"level": 2}} in documents
    assert {"core-test:alarm": {"level": 3}} not in documents
    assert any("ietf-netconf-notifications:netconf-config-change" in d for d in documents)


def test_live_subscription_with_xpath_filter(core: Core) -> None:
    subscription = core.subscribe("NETCONF", xpath_filter="/core-test:alarm[level>=3]")
    received: list[Notification] = []
    reader = threading.Thread(target=lambda: received.extend(subscription))
    reader.start()
    core.publish("NETCONF", '{"core-test:alarm": {"level": 1}}')
    core.edit(RUNNING, [create(item_path(2), item(2))], SYSTEM)
    core.publish("NETCONF", '{"core-test:alarm": {"level": 4}}')
    subscription.close()
    reader.join(5)
    assert [json.loads(n.document) for n in received] == [{"core-test:alarm": {"level": 4}}]


def test_config_change_event_names_the_edit(core: Core) -> None:
    subscription = core.subscribe("NETCONF")
    core.edit(RUNNING, [create(item_path(2), item(2))], Principal("alice"), session="12")
    subscription.close()
    (event,) = [json.loads(n.document) for n in subscription]
    change = event["ietf-netconf-notifications:netconf-config-change"]
    assert change["changed-by"] == {"username": "alice", "session-id": 12}
    assert change["edit"] == [{"target": item_path(2), "operation": "create"}]


def test_unknown_stream_is_refused(core: Core) -> None:
    with pytest.raises(CatsError):
        core.subscribe("nope")
