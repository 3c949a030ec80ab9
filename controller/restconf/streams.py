"""Event streams (RFC 8040 6): ietf-restconf-monitoring state and server-sent event framing.

Each stream the core serves is offered in both encodings (RFC 8040 6.3), at
``{+restconf}/streams/<encoding>/<name>``. A notification is sent in JSON as
``ietf-restconf:notification`` with its ``eventTime`` (6.4), or in XML inside the RFC 5277
``notification`` element, its body converted from the core's JSON by the model's codec.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime

from lxml import etree

from controller.datastore.api import Notification, StreamInfo, Subscription
from controller.errors import CatsError
from controller.model import Encoding

LOG = logging.getLogger(__name__)
#: Stream encodings served (RFC 8040 9.2.1 ``access/encoding``).
STREAM_ENCODINGS: dict[str, Encoding] = {"json": Encoding.JSON, "xml": Encoding.XML}
CAPABILITY = "urn:ietf:params:restconf:capability"
#: RFC 5277 4: the envelope of an XML notification, and ``replayComplete``'s module.
NOTIFICATION_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NETMOD_NOTIFICATION_NS = "urn:ietf:params:xml:ns:netmod:notification"

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

#: Converts a notification document from RFC 7951 JSON to XML (model.codec.NotificationCodec).
ToXml = Callable[[str], str]


def stream_location(base_url: str, encoding: str, name: str) -> str:
    """The URI a client GETs to receive a stream (RFC 8040 6.3)."""
    return f"{base_url.rstrip('/')}/streams/{encoding}/{name}"


def _stream_entry(stream: StreamInfo, base_url: str) -> dict[str, object]:
    entry: dict[str, object] = {
        "name": stream.name,
        "description": stream.description,
        "replay-support": stream.replay_support,
    }
    if stream.replay_support and stream.replay_log_creation_time is not None:
        entry["replay-log-creation-time"] = _event_time(stream.replay_log_creation_time)
    entry["access"] = [
        {"encoding": encoding, "location": stream_location(base_url, encoding, stream.name)}
        for encoding in STREAM_ENCODINGS
    ]
    return entry


def monitoring_state(streams: Sequence[StreamInfo], base_url: str) -> dict[str, object]:
    """``restconf-state`` (RFC 8040 9.1, 9.2) as RFC 7951 JSON, for the core's state provider."""
    return {
        MONITORING: {
            "capabilities": {"capability": list(CAPABILITIES)},
            "streams": {"stream": [_stream_entry(stream, base_url) for stream in streams]},
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


def notification_xml(notification: Notification, to_xml: ToXml) -> str:
    """The RFC 8040 6.4 XML of a notification: RFC 5277's ``notification`` with eventTime.

    The replay-complete marker is RFC 5277 3.2.5's ``replayComplete`` (its module is not part
    of the schema, so it is the one element written here rather than by libyang).
    """
    root = etree.Element(f"{{{NOTIFICATION_NS}}}notification", nsmap={None: NOTIFICATION_NS})
    etree.SubElement(root, f"{{{NOTIFICATION_NS}}}eventTime").text = _event_time(
        notification.event_time
    )
    if notification.replay_complete:
        tag = f"{{{NETMOD_NOTIFICATION_NS}}}replayComplete"
        etree.SubElement(root, tag, nsmap={None: NETMOD_NOTIFICATION_NS})
    else:
        root.append(etree.fromstring(to_xml(notification.document)))
    return str(etree.tostring(root, encoding="unicode"))


def sse_event(notification: Notification, data: str | None = None) -> bytes:
    """One server-sent event (W3C EventSource): ``id`` (or ``event: replay-complete``) and the
    ``data`` lines (the JSON of the notification unless ``data`` is given)."""
    if data is None:
        data = json.dumps(notification_json(notification), separators=(",", ":"))
    if notification.replay_complete:
        lines = ["event: replay-complete"]
    else:
        lines = [f"id: {notification.replay_id}"] if notification.replay_id else []
    lines += [f"data: {line}" for line in data.splitlines()]
    return ("\n".join(lines) + "\n\n").encode()


def sse_comment(text: str) -> bytes:
    """An SSE comment line (ignored by clients; keeps an idle connection alive)."""
    return f": {text}\n\n".encode()


#: Renders one notification as the ``data`` of its event.
Render = Callable[[Notification], str]


def renderer(encoding: Encoding, to_xml: ToXml) -> Render:
    """The ``data`` of an event in a stream encoding."""
    if encoding is Encoding.XML:
        return lambda notification: notification_xml(notification, to_xml)
    return lambda notification: json.dumps(notification_json(notification), separators=(",", ":"))


HEARTBEAT_S = 15.0
_END = object()


def _pump(subscription: Subscription, out: queue.Queue[object]) -> None:
    try:
        for notification in subscription:
            out.put(notification)
    finally:
        out.put(_END)


def event_source(
    subscription: Subscription, render: Render, *, heartbeat: float = HEARTBEAT_S
) -> Iterator[bytes]:
    """Server-sent events of a subscription (RFC 8040 6.4).

    The subscription says when a replay ends (its ``replay_complete`` marker), which is sent as
    the ``replay-complete`` event. A reader thread drains the subscription so that this
    generator can wake up to send heartbeat comments, which make a vanished client's connection
    fail and so close the subscription.
    """
    pending: queue.Queue[object] = queue.Queue()
    threading.Thread(target=_pump, args=(subscription, pending), daemon=True).start()
    try:
        yield sse_comment("subscribed")
        while True:
            try:
                item = pending.get(timeout=heartbeat)
            except queue.Empty:
                yield sse_comment("heartbeat")
                continue
            if item is _END:
                break
            assert isinstance(item, Notification)
            try:
                data = render(item)
            except CatsError as exc:  # not a notification of the schema: skip it, say so
                LOG.error("notification %s not sent: %s", item.replay_id, exc)
                yield sse_comment(f"notification {item.replay_id} could not be encoded")
                continue
            yield sse_event(item, data)
    finally:
        subscription.close()
