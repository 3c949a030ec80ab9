"""Notifications of the server core (RFC 5277, RFC 8040 6, RFC 8639): validated, put on a
stream, delivered to the subscribers that may receive them (RFC 8341 3.4.6).

A notification that cannot read running is parsed and validated in a twin context, outside
the read lock; only its delivery holds it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from controller.datastore import rpc
from controller.datastore.api import SYSTEM, Notification, Principal, StreamInfo, Subscription
from controller.datastore.bus import Subscriber
from controller.datastore.parts import CoreParts
from controller.errors import CatsError
from controller.model import nodes
from controller.model.schema import Encoding


class Publishing(CoreParts):
    """The notifications of the core."""

    def publish(self, stream: str, document: str) -> Notification:
        """Validate an application notification and put it on a stream (and NETCONF's).

        Parsing and printing read only the schema, and a notification that cannot read
        running (:func:`rpc.notification_reads_running`, decided once per notification) is
        validated without it, so only the delivery holds the core lock. Such a notification,
        once known by its JSON member name, is parsed in a twin context (as an RPC's input).
        """
        encoding = _encoding_of(document)
        member = rpc.first_member(document) if encoding is Encoding.JSON else None
        name = None if member is None else member.group(1)
        if name is not None and self._free_notifications.get(name):
            with self._contexts.borrow() as ctx:
                canonical = self._canonical(ctx, document, encoding, None)
        else:
            canonical = self._canonical(self.ctx, document, encoding, name)
        with self._lock:  # before the bus's own guard, as subscribe takes them
            return self.bus.publish(stream, canonical)

    def _canonical(self, ctx: Any, document: str, encoding: Encoding, name: str | None) -> str:
        """The validated notification as libyang prints it. In the core's context (``ctx``
        is self.ctx) it also learns whether the notification named ``name`` reads running."""
        tree, notification = nodes.parse_op(ctx, document, encoding, _NOTIF)
        try:
            reads = False  # a twin only gets notifications known to read no configuration
            if ctx == self.ctx:
                reads = self._notification_reads_running(notification)
                if name is not None and notification == tree:  # top-level: known by name
                    self._free_notifications[name] = not reads
            if reads:
                with self._lock:
                    self._validate_notification(ctx, tree, self.running.first[0])
            else:
                self._validate_notification(ctx, tree, None)
            flags = nodes.lib.LYD_PRINT_WITHSIBLINGS | nodes.lib.LYD_PRINT_SHRINK
            return nodes.print_tree(tree, Encoding.JSON, flags)
        finally:
            nodes.free_all(tree)

    @staticmethod
    def _validate_notification(ctx: Any, tree: nodes.Node, dep: nodes.Node) -> None:
        if nodes.lib.lyd_validate_op(tree, dep or nodes.ffi.NULL, _NOTIF, nodes.ffi.NULL):
            raise nodes.fail(ctx)

    def _notification_reads_running(self, notification: nodes.Node) -> bool:
        """Whether the notification's validation needs running; asked once per schema node."""
        if notification is None or notification == nodes.ffi.NULL:
            return True
        key = int(nodes.ffi.cast("uintptr_t", notification.schema))
        found = self._notifications.get(key)
        if found is None:
            found = self._notifications[key] = rpc.notification_reads_running(notification.schema)
        return found

    def subscribe(
        self,
        stream: str,
        *,
        start_time: datetime | None = None,
        stop_time: datetime | None = None,
        xpath_filter: str | None = None,
        principal: Principal = SYSTEM,
    ) -> Subscription:
        """Subscribe to a stream, replaying the bounded log from ``start_time``; only the
        events ``principal`` may receive are delivered (RFC 8341 3.4.6)."""
        with self._lock:
            return self.bus.subscribe(
                stream,
                start_time=start_time,
                stop_time=stop_time,
                xpath_filter=xpath_filter,
                subscriber=None
                if principal == SYSTEM
                else Subscriber(principal.user, self.authorization.admit(principal)),
            )

    def streams(self) -> tuple[StreamInfo, ...]:
        """The event streams, ``NETCONF`` first (RFC 8040 9.2.1, RFC 5277 3.1)."""
        return self.bus.streams()

    def _matches(self, document: str, xpath: str) -> bool:
        with self._lock:
            try:
                tree, _ = nodes.parse_op(self.ctx, document, Encoding.JSON, _NOTIF)
            except CatsError:
                return False
            try:
                return bool(nodes.find_all(self.ctx, tree, xpath))
            except CatsError:
                return False
            finally:
                nodes.free_all(tree)


_NOTIF = nodes.lib.LYD_TYPE_NOTIF_YANG


def _encoding_of(document: str) -> Encoding:
    return Encoding.XML if document.lstrip().startswith("<") else Encoding.JSON


__all__ = ["Publishing"]
