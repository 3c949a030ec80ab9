"""controller.datastore.rpc and bus: validated RPCs, notifications, replay, filters."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from controller.datastore import Core, CoreSettings
from controller.datastore.api import (
    REPLAY_COMPLETE,
    SYSTEM,
    Notification,
    Principal,
    Registrations,
)
from controller.errors import CatsError
from controller.model import Encoding, Schema
from controller.types import DataPath, SchemaPath
from tests.unit.datastore.conftest import RUNNING, create, item, item_path, nacm_policy, nacm_rule

ADD = "/core-test:add"


def add(principal: Principal, members: dict[str, object]) -> dict[str, object]:
    del principal
    return {"sum": int(str(members["a"])) + int(str(members.get("b", 0)))}


@pytest.fixture
def with_add(registrations: Registrations) -> None:
    registrations.rpcs[SchemaPath(ADD)] = add


def test_rpc_input_and_output_are_validated(with_add: None, core: Core) -> None:
    reply = core.invoke(
        DataPath(ADD), '{"core-test:input": {"a": 2, "b": 3}}', Encoding.JSON, SYSTEM
    )
    assert json.loads(reply) == {"core-test:output": {"sum": 5}}
    reply = core.invoke(DataPath(ADD), '{"core-test:add": {"a": 1}}', Encoding.JSON, SYSTEM)
    assert json.loads(reply) == {"core-test:output": {"sum": 1}}
    xml = '<input xmlns="urn:example:core-test"><a>4</a></input>'
    assert "<sum>4</sum>" in core.invoke(DataPath(ADD), xml, Encoding.XML, SYSTEM)
    with pytest.raises(CatsError) as missing:
        core.invoke(DataPath(ADD), '{"core-test:input": {"b": 3}}', Encoding.JSON, SYSTEM)
    assert missing.value.items[0].tag == "missing-element"
    with pytest.raises(CatsError) as overflow:  # 200 + 200 does not fit the output's uint8
        core.invoke(
            DataPath(ADD), '{"core-test:input": {"a": 200, "b": 200}}', Encoding.JSON, SYSTEM
        )
    # Invalid output is the server's failure, not the client's (RFC 7950 7.14.3, RFC 8040 7).
    (error,) = overflow.value.items
    assert error.tag == "operation-failed"
    assert error.path == ADD
    assert "400" not in error.message  # the handler's output stays in the log


def test_malformed_input_is_malformed_message(with_add: None, core: Core) -> None:
    for document, encoding in (
        ('{"core-test:input": ', Encoding.JSON),
        ('<input xmlns="urn:example:core-test"><a>', Encoding.XML),
    ):
        with pytest.raises(CatsError) as caught:
            core.invoke(DataPath(ADD), document, encoding, SYSTEM)
        assert caught.value.items[0].tag == "malformed-message"


def test_a_failing_handler_is_operation_failed(registrations: Registrations, core: Core) -> None:
    def broken(principal: Principal, members: dict[str, object]) -> dict[str, object]:
        raise RuntimeError("secret detail")

    core.registrations.rpcs[SchemaPath(ADD)] = broken
    with pytest.raises(CatsError) as caught:
        core.invoke(DataPath(ADD), '{"core-test:input": {"a": 1}}', Encoding.JSON, SYSTEM)
    (error,) = caught.value.items
    assert error.tag == "operation-failed"
    assert "secret" not in error.message


def test_unknown_or_unserved_rpc_is_operation_not_supported(core: Core) -> None:
    for path in ("/core-test:nothing", ADD):
        with pytest.raises(CatsError) as caught:
            core.invoke(DataPath(path), '{"core-test:input": {"a": 1}}', Encoding.JSON, SYSTEM)
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
    core.edit(RUNNING, [nacm_policy("alice", nacm_rule("all", "permit"))], SYSTEM)
    subscription = core.subscribe("NETCONF")
    core.edit(RUNNING, [create(item_path(2), item(2))], Principal("alice"), session="12")
    subscription.close()
    (event,) = [json.loads(n.document) for n in subscription]
    change = event["ietf-netconf-notifications:netconf-config-change"]
    assert change["changed-by"] == {"username": "alice", "session-id": 12}
    assert change["edit"] == [{"target": item_path(2), "operation": "create"}]


def test_replay_ends_with_a_replay_complete_marker_before_live_events(core: Core) -> None:
    start = datetime.now(UTC) - timedelta(seconds=1)
    core.publish("NETCONF", '{"core-test:alarm": {"level": 1}}')
    core.publish("NETCONF", '{"core-test:alarm": {"level": 2}}')
    subscription = core.subscribe(
        "NETCONF", start_time=start, xpath_filter="/core-test:alarm[level>=2]"
    )
    core.publish("NETCONF", '{"core-test:alarm": {"level": 3}}')
    subscription.close()
    received = list(subscription)
    assert [n.replay_complete for n in received] == [False, True, False]
    replayed, marker, live = received
    assert json.loads(replayed.document) == {"core-test:alarm": {"level": 2}}
    assert marker.document == REPLAY_COMPLETE
    assert marker.replay_id == 0
    assert json.loads(live.document) == {"core-test:alarm": {"level": 3}}
    without_replay = core.subscribe("NETCONF")
    without_replay.close()
    assert list(without_replay) == []


def test_the_marker_comes_even_when_stop_time_has_passed(core: Core) -> None:
    start = datetime.now(UTC) - timedelta(seconds=2)
    core.publish("NETCONF", '{"core-test:alarm": {"level": 1}}')
    stop = datetime.now(UTC)
    core.publish("NETCONF", '{"core-test:alarm": {"level": 2}}')
    subscription = core.subscribe(
        "NETCONF", start_time=start, stop_time=stop, xpath_filter="/core-test:alarm"
    )
    received = list(subscription)  # ends at once: stop-time has passed
    assert received[-1].replay_complete
    assert [json.loads(n.document) for n in received[:-1]] == [{"core-test:alarm": {"level": 1}}]


def test_streams_name_netconf_first_with_replay(test_schema: Schema, tmp_path: Path) -> None:
    settings = CoreSettings(streams=("alarms",))
    with Core(test_schema, tmp_path / "state", settings=settings) as core:
        netconf, alarms = core.streams()
    assert netconf.name == "NETCONF"
    assert netconf.description == "default NETCONF event stream"
    assert netconf.replay_support
    assert netconf.replay_log_creation_time is not None
    assert netconf.replay_log_creation_time <= datetime.now(UTC)
    assert alarms.name == "alarms"


def test_ending_subscriptions_ends_their_iteration(core: Core) -> None:
    subscription = core.subscribe("NETCONF")
    received: list[Notification] = []
    reader = threading.Thread(target=lambda: received.extend(subscription))
    reader.start()
    core.publish("NETCONF", '{"core-test:alarm": {"level": 1}}')
    core.end_subscriptions()
    reader.join(5)
    assert not reader.is_alive()
    assert [json.loads(n.document) for n in received] == [{"core-test:alarm": {"level": 1}}]


def test_unknown_stream_is_refused(core: Core) -> None:
    with pytest.raises(CatsError):
        core.subscribe("nope")
