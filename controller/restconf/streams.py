"""Event streams (RFC 8040 6): ietf-restconf-monitoring state and server-sent event framing."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from controller.datastore.api import Notification, Subscription

#: The streams every C-PS serves (RFC 8040 6.2: "NETCONF" is the default stream).
DEFAULT_STREAMS = ("NETCONF",)
#: Stream encodings served; XML needs a JSON-to-XML codec in controller.model first.
STREAM_ENCODINGS = ("json",)
CAPABILITY = "urn:ietf:params:restconf:capability"

#: RFC 8040 9.1.1 capability URIs this server implements.
CAPABILITIES = (
    f"{CAPABILITY}:defaults:1.0?basic-mode=explicit",
    f"{CAPABILITY}:depth:1.0",
    f"{CAPABILITY}:fields:1.0",
    f"{CAPABILITY}:filter:1.0",
    f"{CAPABILITY}:replay:1.0",
    f"{CAPABILITY}:with-defaults:1.0",
    "urn:ietf:params:restconf:capability:yang-patch:1.0",
)
MONITORING = "ietf-restconf-monitoring:restconf-state"


@dataclass(frozen=True, slots=True)
class StreamInfo:
    """A stream as ietf-restconf-monitoring lists it."""

    name: str
    description: str = "default NETCONF event stream"
    replay_support: bool = True


def stream_location(base_url: str, encoding: str, name: str) -> str:
    """The URI a client GETs to receive a stream (RFC 8040 6.3)."""
    return f"{base_url.rstrip('/')}/streams/{encoding}/{name}"


def monitoring_state(streams: Sequence[StreamInfo], base_url: str) -> dict[str, object]:
    """``restconf-state`` (RFC 8040 9.1, 9.2) as RFC 7951 JSON, for the core's state provider."""
    listed = [
        {
            "name": stream.name,
            "description": stream.description,
            "replay-support": stream.replay_support,
            "access": [
                {"encoding": encoding, "location": stream_location(base_url, encoding, stream.name)}
                for encoding in STREAM_ENCODINGS
            ],
        }
        for stream in streams
    ]
    return {
        MONITORING: {
            "capabilities": {"capability": list(CAPABILITIES)},
            "streams": {"stream": listed},
        }
    }


def _event_time(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat()


def notification_json(notification: Notification) -> dict[str, object]:
    """The RFC 8040 6.4 JSON of a notification: ``ietf-restconf:notification`` with eventTime."""
    body = json.loads(notification.document)
    if isinstance(body, dict) and "ietf-restconf:notification" in body:
        wrapped: dict[str, object] = body
        return wrapped
    inner = {"eventTime": _event_time(notification.event_time)}
    if isinstance(body, dict):
        inner.update(body)
    return {"ietf-restconf:notification": inner}


def sse_event(notification: Notification) -> bytes:
    """One server-sent event (W3C EventSource): ``id`` and one ``data`` line of JSON."""
    data = json.dumps(notification_json(notification), separators=(",", ":"))
    lines = [f"id: {notification.replay_id}"] if notification.replay_id else []
    lines += [f"data: {line}" for line in data.splitlines()]
    return ("\n".join(lines) + "\n\n").encode()


def sse_comment(text: str) -> bytes:
    """An SSE comment line (ignored by clients; keeps an idle connection alive)."""
    return f": {text}\n\n".encode()


REPLAY_QUIET_S = 0.2
HEARTBEAT_S = 15.0
_END = object()


def replay_complete_event(moment: datetime) -> bytes:
    """The event that ends a replay (RFC 5277 3.2.5 ``replayComplete``), as an SSE event."""
    body = {
        "ietf-restconf:notification": {
            "eventTime": _event_time(moment),
            "nc-notifications:replayComplete": [None],
        }
    }
    data = json.dumps(body, separators=(",", ":"))
    return f"event: replay-complete\ndata: {data}\n\n".encode()


def _pump(subscription: Subscription, out: queue.Queue[object]) -> None:
    try:
        for notification in subscription:
            out.put(notification)
    finally:
        out.put(_END)


def event_source(
    subscription: Subscription,
    *,
    replay: bool,
    heartbeat: float = HEARTBEAT_S,
) -> Iterator[bytes]:
    """Server-sent events of a subscription (RFC 8040 6.4).

    A reader thread drains the subscription so that this generator can wake up: to send the
    replay-complete event once the replayed events are out (events logged before the
    subscription, or a quiet moment), and to send heartbeat comments that make a vanished
    client's connection fail, which closes the subscription.
    """
    subscribed_at = datetime.now(UTC)
    pending: queue.Queue[object] = queue.Queue()
    threading.Thread(target=_pump, args=(subscription, pending), daemon=True).start()
    replaying = replay
    try:
        yield sse_comment("subscribed")
        while True:
            try:
                item = pending.get(timeout=REPLAY_QUIET_S if replaying else heartbeat)
            except queue.Empty:
                if replaying:
                    replaying = False
                    yield replay_complete_event(datetime.now(UTC))
                else:
                    yield sse_comment("heartbeat")
                continue
            if item is _END:
                break
            assert isinstance(item, Notification)
            if replaying and item.event_time > subscribed_at:
                replaying = False
                yield replay_complete_event(datetime.now(UTC))
            yield sse_event(item)
        if replaying:
            yield replay_complete_event(datetime.now(UTC))
    finally:
        subscription.close()
