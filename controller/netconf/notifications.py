"""RFC 5277 notifications: create-subscription's parameters and the ``<notification>`` message.

The core keeps every event as RFC 7951 JSON; it is converted to XML by the model's codec,
wrapped with its ``eventTime`` (RFC 5277 4) and filtered by a subtree filter here (an XPath
filter is evaluated by the core).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from lxml import etree

from controller.datastore.api import Notification, StreamInfo
from controller.errors import ErrorType
from controller.netconf.errors import bad_element, netconf_error
from controller.netconf.messages import parse_fragment
from controller.netconf.reads import Filter, parse_filter
from controller.netconf.subtree import subtree_filter
from controller.types import Element

NOTIFICATION_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NETMOD_NS = "urn:ietf:params:xml:ns:netmod:notification"
_N = f"{{{NOTIFICATION_NS}}}"
#: Converts a notification document from RFC 7951 JSON to XML (model.codec.NotificationCodec).
ToXml = Callable[[str], str]


def parse_time(raw: str, name: str) -> datetime:
    """An RFC 3339 date-and-time; a time without a zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise bad_element("bad-element", name, f"{name} is not a date-and-time") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class SubscriptionRequest:
    """The parameters of ``<create-subscription>`` (RFC 5277 2.1.1)."""

    stream: str = "NETCONF"
    filter: Filter | None = None
    start_time: datetime | None = None
    stop_time: datetime | None = None

    @classmethod
    def parse(cls, operation: Element, streams: Sequence[StreamInfo]) -> SubscriptionRequest:
        """Check the parameters against the streams the core serves."""
        stream = (operation.findtext(_N + "stream") or "NETCONF").strip()
        known = {info.name: info for info in streams}
        if stream not in known:
            raise bad_element("invalid-value", "stream", f"no stream {stream!r}")
        start = operation.findtext(_N + "startTime")
        stop = operation.findtext(_N + "stopTime")
        start_time = parse_time(start, "startTime") if start is not None else None
        stop_time = parse_time(stop, "stopTime") if stop is not None else None
        if stop_time is not None and start_time is None:
            raise bad_element("missing-element", "startTime", "stopTime needs startTime")
        if start_time is not None:
            if start_time > datetime.now(UTC):
                raise bad_element("bad-element", "startTime", "startTime is in the future")
            if stop_time is not None and stop_time < start_time:
                raise bad_element("bad-element", "stopTime", "stopTime is before startTime")
            if not known[stream].replay_support:
                raise netconf_error(
                    "operation-failed",
                    f"stream {stream!r} has no replay",
                    error_type=ErrorType.APPLICATION,
                )
        return cls(stream, parse_filter(operation.find(_N + "filter")), start_time, stop_time)


def _event_time(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat().replace("+00:00", "Z")


def notification_message(
    event: Notification, to_xml: ToXml, filter_: Filter | None
) -> Element | None:
    """The ``<notification>`` of one event; None when a subtree filter drops it."""
    root = etree.Element(_N + "notification", nsmap={None: NOTIFICATION_NS})
    etree.SubElement(root, _N + "eventTime").text = _event_time(event.event_time)
    if event.replay_complete:
        etree.SubElement(root, f"{{{NETMOD_NS}}}replayComplete", nsmap={None: NETMOD_NS})
        return root
    body = parse_fragment(to_xml(event.document))
    if filter_ is not None and filter_.subtree is not None:
        body = subtree_filter(body, filter_.subtree)
        if not body:
            return None
    for element in body:
        root.append(element)
    return root


def complete_message() -> Element:
    """``notificationComplete``, after the stop time (RFC 5277 2.2.1)."""
    root = etree.Element(_N + "notification", nsmap={None: NOTIFICATION_NS})
    etree.SubElement(root, _N + "eventTime").text = _event_time(datetime.now(UTC))
    etree.SubElement(root, f"{{{NETMOD_NS}}}notificationComplete", nsmap={None: NETMOD_NS})
    return root
