"""Server-sent event framing and the monitoring state (RFC 8040 6, 9)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from lxml import etree

from controller.datastore.api import REPLAY_COMPLETE, Notification, StreamInfo
from controller.model import Encoding
from controller.restconf.streams import (
    MONITORING,
    NETMOD_NOTIFICATION_NS,
    NOTIFICATION_NS,
    event_source,
    monitoring_state,
    notification_xml,
    renderer,
    sse_event,
)

T0 = datetime(2026, 11, 30, tzinfo=UTC)
TICKED = '{"rc-test:ticked": {"count": 1}}'
TICKED_XML = '<ticked xmlns="urn:example:rc-test"><count>1</count></ticked>'


def _to_xml(document: str) -> str:
    """A stand-in for the model's codec: knows the one document these tests send."""
    assert document == TICKED
    return TICKED_XML


def test_monitoring_lists_streams_in_both_encodings_and_capabilities() -> None:
    streams = [
        StreamInfo("NETCONF", "default NETCONF event stream", T0, replay_support=True),
        StreamInfo("alarms", "alarms", replay_support=False),
    ]
    state = monitoring_state(streams, "http://h:1/restconf")
    body = state[MONITORING]
    assert isinstance(body, dict)
    assert "urn:ietf:params:restconf:capability:depth:1.0" in body["capabilities"]["capability"]
    netconf, alarms = body["streams"]["stream"]
    assert netconf["access"] == [
        {"encoding": "json", "location": "http://h:1/restconf/streams/json/NETCONF"},
        {"encoding": "xml", "location": "http://h:1/restconf/streams/xml/NETCONF"},
    ]
    assert netconf["description"] == "default NETCONF event stream"
    assert netconf["replay-support"] is True
    assert netconf["replay-log-creation-time"].startswith("2026-11-30T00:00:00")
    assert alarms["replay-support"] is False
    assert "replay-log-creation-time" not in alarms


def test_sse_event_wraps_the_notification() -> None:
    event = sse_event(Notification("NETCONF", T0, TICKED, 4))
    lines = event.decode().splitlines()
    assert lines[0] == "id: 4"
    data = json.loads(lines[1].removeprefix("data: "))
    assert data["ietf-restconf:notification"]["rc-test:ticked"] == {"count": 1}
    assert data["ietf-restconf:notification"]["eventTime"].startswith("2026-11-30T00:00:00")


def test_xml_notification_is_in_the_rfc5277_envelope() -> None:
    root = etree.fromstring(notification_xml(Notification("NETCONF", T0, TICKED, 4), _to_xml))
    assert root.tag == f"{{{NOTIFICATION_NS}}}notification"
    assert root.findtext(f"{{{NOTIFICATION_NS}}}eventTime", "").startswith("2026-11-30T00")
    assert root.findtext("{urn:example:rc-test}ticked/{urn:example:rc-test}count") == "1"


def test_replay_complete_in_both_encodings() -> None:
    marker = Notification("NETCONF", T0, REPLAY_COMPLETE, replay_complete=True)
    json_event = sse_event(marker).decode().splitlines()
    assert json_event[0] == "event: replay-complete"
    body = json.loads(json_event[1].removeprefix("data: "))["ietf-restconf:notification"]
    assert body["nc-notifications:replayComplete"] == {}
    xml = renderer(Encoding.XML, _to_xml)(marker)
    root = etree.fromstring(xml)
    assert root.find(f"{{{NETMOD_NOTIFICATION_NS}}}replayComplete") is not None


class _Replay:
    """A subscription that replays two logged events, marks the end of the replay, and ends."""

    def __init__(self, *, live: bool = False) -> None:
        self.closed = False
        self.live = live

    def __iter__(self) -> Iterator[Notification]:
        old = T0 - timedelta(minutes=1)
        yield Notification("NETCONF", old, TICKED, 1)
        yield Notification("NETCONF", old, '{"rc-test:ticked": {"count": 2}}', 2)
        yield Notification("NETCONF", T0, REPLAY_COMPLETE, replay_complete=True)
        if self.live:
            yield Notification("NETCONF", T0, '{"rc-test:ticked": {"count": 3}}', 3)

    def close(self) -> None:
        self.closed = True


def test_event_source_sends_replay_complete_where_the_subscription_marks_it() -> None:
    subscription = _Replay(live=True)
    events = list(event_source(subscription, renderer(Encoding.JSON, _to_xml)))
    kinds = [event.split(b"\n")[0] for event in events]
    assert kinds == [b": subscribed", b"id: 1", b"id: 2", b"event: replay-complete", b"id: 3"]
    assert subscription.closed


def test_event_source_ends_a_replay_with_replay_complete() -> None:
    subscription = _Replay()
    events = list(event_source(subscription, renderer(Encoding.JSON, _to_xml)))
    kinds = [event.split(b"\n")[0] for event in events]
    assert kinds == [b": subscribed", b"id: 1", b"id: 2", b"event: replay-complete"]
    assert subscription.closed


def test_event_source_in_xml() -> None:
    class _One:
        def __iter__(self) -> Iterator[Notification]:
            yield Notification("NETCONF", T0, TICKED, 7)

        def close(self) -> None:
            pass

    _, event = list(event_source(_One(), renderer(Encoding.XML, _to_xml)))
    lines = event.decode().splitlines()
    assert lines[0] == "id: 7"
    data = "".join(line.removeprefix("data: ") for line in lines[1:])
    assert etree.fromstring(data).tag == f"{{{NOTIFICATION_NS}}}notification"
