"""The notification bus: streams, a bounded replay log and subscriptions (RFC 5277, RFC 8040 6).

Every notification goes to the ``NETCONF`` stream (RFC 5277 3.2.3) and to any other stream it
is published on. Subscribers block on a condition variable (no polling); a replay delivers the
logged events from ``start_time``, then a ``replay_complete`` marker, before the live ones, and
``stop_time`` ends the subscription.
XPath filters are evaluated by a ``Matcher`` the core supplies (it parses the document with
libyang), outside the bus's lock.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from controller.datastore.api import REPLAY_COMPLETE, Notification, StreamInfo
from controller.datastore.errors import refuse

NETCONF_STREAM = "NETCONF"
DEFAULT_REPLAY = 1000
NETCONF_DESCRIPTION = "default NETCONF event stream"

#: Whether a notification document is selected by an XPath filter.
Matcher = Callable[[str, str], bool]


@dataclass(frozen=True, slots=True)
class Subscriber:
    """Who subscribed, and which events that user may receive (RFC 8341 3.4.6)."""

    owner: str
    admit: Callable[[Notification], bool]


class StreamSubscription:
    """One subscriber's queue; iterate to receive, :meth:`close` to stop (api.Subscription)."""

    def __init__(
        self,
        bus: NotificationBus,
        stop_time: datetime | None,
        xpath_filter: str | None,
        subscriber: Subscriber | None = None,
    ) -> None:
        self._bus = bus
        self._stop_time = stop_time
        self.xpath_filter = xpath_filter
        self.subscriber = subscriber
        # One more than the replay log, so a full replay and its marker fit.
        self._queue: deque[Notification] = deque(maxlen=bus.capacity + 1)
        self._ready = threading.Condition()
        self._closed = False

    def deliver(self, notification: Notification) -> None:
        """Queue one event (the bus calls this)."""
        with self._ready:
            self._queue.append(notification)
            self._ready.notify_all()

    def close(self) -> None:
        """End the subscription: iteration stops after what is already queued."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        self._bus.unsubscribe(self)

    def _next(self) -> Notification | None:
        with self._ready:
            while not self._queue:
                if self._closed:
                    return None
                if self._stop_time is None:
                    self._ready.wait()
                    continue
                remaining = (self._stop_time - datetime.now(UTC)).total_seconds()
                if remaining <= 0:
                    return None
                self._ready.wait(remaining)
            item = self._queue.popleft()
        if item.replay_complete:
            return item  # even when stop-time has passed: the replay did complete
        if self._stop_time is not None and item.event_time > self._stop_time:
            return None
        return item

    def __iter__(self) -> Iterator[Notification]:
        while (item := self._next()) is not None:
            yield item
        self.close()


class NotificationBus:
    """Streams with a bounded replay log, thread-safe."""

    def __init__(
        self, matcher: Matcher, capacity: int = DEFAULT_REPLAY, streams: tuple[str, ...] = ()
    ) -> None:
        self.capacity = capacity
        self._matcher = matcher
        self._guard = threading.Lock()
        self._log: deque[Notification] = deque(maxlen=capacity)
        self._created = datetime.now(UTC)
        self._streams = {NETCONF_STREAM: NETCONF_DESCRIPTION}
        self._streams.update((name, f"{name} event stream") for name in streams)
        self._subscribers: dict[str, list[StreamSubscription]] = {}
        self._serial = 0

    def streams(self) -> tuple[StreamInfo, ...]:
        """The streams, ``NETCONF`` first; all replay from one log started with the bus."""
        with self._guard:
            names = [NETCONF_STREAM, *sorted(set(self._streams) - {NETCONF_STREAM})]
            return tuple(
                StreamInfo(name, self._streams[name], self._created, replay_support=True)
                for name in names
            )

    def add_stream(self, name: str, description: str | None = None) -> None:
        """Declare a stream (per-module streams, for example)."""
        with self._guard:
            self._streams[name] = description or f"{name} event stream"

    def publish(
        self, stream: str, document: str, event_time: datetime | None = None
    ) -> Notification:
        """Log an event and deliver it to the stream's and the NETCONF stream's subscribers."""
        self._check_stream(stream)
        with self._guard:
            self._serial += 1
            event = Notification(stream, event_time or datetime.now(UTC), document, self._serial)
            self._log.append(event)
            targets = list(self._subscribers.get(stream, ()))
            if stream != NETCONF_STREAM:
                targets += self._subscribers.get(NETCONF_STREAM, ())
            # Delivered under the guard, so every subscriber sees events in log order.
            for subscription in targets:
                if self._selected(subscription, event):
                    subscription.deliver(event)
        return event

    def subscribe(
        self,
        stream: str,
        *,
        start_time: datetime | None = None,
        stop_time: datetime | None = None,
        xpath_filter: str | None = None,
        subscriber: Subscriber | None = None,
    ) -> StreamSubscription:
        """Subscribe; with ``start_time`` the logged events from then on come first. Only the
        events the ``subscriber`` may receive are delivered, replayed ones included."""
        self._check_stream(stream)
        if stop_time is not None and start_time is None:
            raise refuse("missing-element", "stop-time needs a start-time (RFC 5277 2.1.1)")
        if start_time is not None and stop_time is not None and stop_time < start_time:
            raise refuse("bad-element", "stop-time is earlier than start-time")
        subscription = StreamSubscription(self, stop_time, xpath_filter, subscriber)
        with self._guard:
            replay = [
                event
                for event in self._log
                if start_time is not None
                and event.event_time >= start_time
                and (stop_time is None or event.event_time <= stop_time)
                and stream in (NETCONF_STREAM, event.stream)
            ]
            for event in replay:
                if self._selected(subscription, event):
                    subscription.deliver(event)
            if start_time is not None:  # under the guard: no live event can come before it
                now = datetime.now(UTC)
                subscription.deliver(
                    Notification(stream, now, REPLAY_COMPLETE, replay_complete=True)
                )
            self._subscribers.setdefault(stream, []).append(subscription)
        return subscription

    def close_all(self) -> None:
        """End every subscription (server shutdown): each stops after what it has queued."""
        with self._guard:
            subscriptions = [sub for subs in self._subscribers.values() for sub in subs]
        for subscription in subscriptions:
            subscription.close()

    def close_owned(self, keep: Callable[[str], bool]) -> int:
        """End the subscriptions whose owner ``keep`` rejects (a deleted user's); how many."""
        with self._guard:
            subscriptions = [
                sub
                for subs in self._subscribers.values()
                for sub in subs
                if sub.subscriber is not None and not keep(sub.subscriber.owner)
            ]
        for subscription in subscriptions:
            subscription.close()
        return len(subscriptions)

    def unsubscribe(self, subscription: StreamSubscription) -> None:
        """Forget a subscription (its :meth:`~StreamSubscription.close` calls this)."""
        with self._guard:
            for subscribers in self._subscribers.values():
                if subscription in subscribers:
                    subscribers.remove(subscription)

    def _selected(self, subscription: StreamSubscription, event: Notification) -> bool:
        if subscription.subscriber is not None and not subscription.subscriber.admit(event):
            return False
        xpath = subscription.xpath_filter
        return xpath is None or self._matcher(event.document, xpath)

    def _check_stream(self, stream: str) -> None:
        with self._guard:
            known = stream in self._streams
        if not known:
            raise refuse("invalid-value", f"no such stream: {stream}")
