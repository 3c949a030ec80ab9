"""Server-sent event framing and the monitoring state (RFC 8040 6, 9)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from controller.datastore.api import Notification
from controller.restconf.streams import (
    MONITORING,
    StreamInfo,
    event_source,
    monitoring_state,
    sse_event,
)

T0 = datetime(2026, 11, 30, tzinfo=UTC)


def test_monitoring_lists_streams_and_capabilities() -> None:
    state = monitoring_state([StreamInfo("NETCONF")], "http://h:1/restconf")
    body = state[MONITORING]
    assert isinstance(body, dict)
    assert "urn:ietf:params:restconf:capability:depth:1.0" in body["capabilities"]["capability"]
    (stream,) = body["streams"]["stream"]
    assert stream["access"] == [
        {"encoding": "json", "location": "http://h:1/restconf/streams/json/NETCONF"}
    ]


def test_sse_event_wraps_the_notification() -> None:
    event = sse_event(Notification("NETCONF", T0, '{"rc-test:ticked": {"count": 1}}', 4))
    lines = event.decode().splitlines()
    assert lines[0] == "id: 4"
    data = json.loads(lines[1].removeprefix("data: "))
    assert data["ietf-restconf:notification"]["rc-test:ticked"] == {"count": 1}
    assert data["ietf-restconf:notification"]["eventTime"].startswith("2026-11-30T00:00:00")


class _Replay:
    """A subscription that replays two logged events and ends."""

    def __init__(self) -> None:
        self.closed = False

    def __iter__(self) -> Iterator[Notification]:
        old = datetime.now(UTC) - timedelta(minutes=1)
        yield Notification("NETCONF", old, '{"rc-test:ticked": {"count": 1}}', 1)
        yield Notification("NETCONF", old, '{"rc-test:ticked": {"count": 2}}', 2)

    def close(self) -> None:
        self.closed = True


def test_event_source_ends_a_replay_with_replay_complete() -> None:
    subscription = _Replay()
    events = list(event_source(subscription, replay=True))
    kinds = [event.split(b"\n")[0] for event in events]
    assert kinds == [b": subscribed", b"id: 1", b"id: 2", b"event: replay-complete"]
    assert subscription.closed
