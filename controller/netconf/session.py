"""One NETCONF session over a byte channel: hello, framing, rpc loop, notifications.

The logic is in the pure modules (framing, messages, operations); this is the loop around
them. A framing failure or oversize message ends the session (after an rpc-error where the
framing still allows one); anything else gets an rpc-error and the session goes on.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from controller import audit
from controller.audit import Event
from controller.datastore.api import Principal, ServerCore, Subscription
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.netconf.confirmed import Actor, ConfirmedCommits
from controller.netconf.errors import FramingError, netconf_error
from controller.netconf.framing import Deframer, frame
from controller.netconf.lenient import qualify_hello, qualify_rpc
from controller.netconf.messages import (
    BASE_11,
    DEFAULT_LIMITS,
    NamespaceOf,
    XmlLimits,
    build_hello,
    error_reply,
    hello_capabilities,
    parse_rpc,
    parse_xml,
    reply,
    root_attributes,
    to_bytes,
)
from controller.netconf.notifications import (
    SubscriptionRequest,
    ToXml,
    complete_message,
    notification_message,
)
from controller.netconf.operations import Operations
from controller.netconf.outcome import Caller
from controller.netconf.sessions import Registry, SessionInfo
from controller.observability.metrics import NETCONF_LATENCY, NETCONF_RPCS

#: The operations NETCONF names (RFC 6241, 5277, 8526, 6022): their own metric label; every
#: modelled RPC shares ``rpc``, so that a client's element names cannot grow the label set.
BASE_OPERATIONS = frozenset(
    {
        "get",
        "get-config",
        "get-data",
        "edit-config",
        "edit-data",
        "copy-config",
        "delete-config",
        "lock",
        "unlock",
        "close-session",
        "kill-session",
        "commit",
        "discard-changes",
        "cancel-commit",
        "validate",
        "get-schema",
        "create-subscription",
    }
)
LOG = logging.getLogger(__name__)
NOTIFICATIONS = "ietf-netconf-notifications"
RECV_SIZE = 65536


class Channel(Protocol):
    """The byte channel of a session (a paramiko Channel)."""

    def recv(self, nbytes: int) -> bytes: ...

    def sendall(self, data: bytes) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SessionEnv:
    """What every session of a server shares."""

    core: ServerCore
    operations: Operations
    registry: Registry
    confirmed: ConfirmedCommits
    capabilities: tuple[str, ...]
    namespace_of: NamespaceOf
    to_xml: ToXml
    resolve_xpath: Callable[[str], str]
    max_message_size: int
    max_sessions: int
    events: Callable[[str], None]
    limits: XmlLimits = DEFAULT_LIMITS  # the shape of a message: attributes, elements, depth
    strict: bool = False  # RFC 6241 as written: no unqualified base elements (lenient.py)


class NetconfSession:
    """Runs one session to its end on the calling thread."""

    def __init__(
        self, env: SessionEnv, channel: Channel, principal: Principal, source: str
    ) -> None:
        self._env = env
        self._channel = channel
        self._principal = principal
        self._source = source
        self._send_lock = threading.Lock()
        self._chunked = False
        self._subscription: Subscription | None = None
        self._pending: tuple[Subscription, SubscriptionRequest] | None = None
        self._killed_by: int | None = None
        self._reason = "dropped"
        self.session_id = env.registry.next_id()
        self._info = SessionInfo(self.session_id, principal.user, source, self._kill)

    # ---------------------------------------------------------------- I/O

    def _send(self, message: bytes) -> None:
        with self._send_lock:
            self._channel.sendall(frame(message, chunked=self._chunked))

    def _messages(self, deframer: Deframer) -> bytes | None:
        while True:
            message = deframer.next_message()
            if message is not None:
                return message
            data = self._channel.recv(RECV_SIZE)
            if not data:
                return None
            deframer.feed(data)

    # ---------------------------------------------------------------- the session

    def run(self) -> None:
        """Hello, then rpcs until close-session, kill-session or the channel drops."""
        env = self._env
        deframer = Deframer(env.max_message_size)
        audit.bind(audit.RequestInfo("netconf", self._source, str(self.session_id)))
        try:
            self._send(build_hello(env.capabilities, self.session_id))
            hello = self._messages(deframer)
            if hello is None:
                return
            try:
                root = parse_xml(hello, env.limits)
                capabilities = hello_capabilities(root if env.strict else qualify_hello(root))
            except CatsError:
                env.registry.bad_hello()
                self._reason = "bad-hello"
                return
            if BASE_11 in capabilities and BASE_11 in env.capabilities:
                self._chunked = True
                deframer.use_chunked()
            if not env.registry.add(self._info, env.max_sessions):
                self._refuse(deframer)
                return
            self._announce_start()
            self._loop(deframer)
        except FramingError as exc:
            self._framing_failed(exc)
        except OSError as exc:
            LOG.debug("session %d: channel failed: %s", self.session_id, exc)
        finally:
            self._end()

    def _loop(self, deframer: Deframer) -> None:
        while True:
            message = self._messages(deframer)
            if message is None:
                return
            if self._handle(message):
                self._reason = "closed"
                return

    def _refuse(self, deframer: Deframer) -> None:
        """Over the session bound: the first rpc gets ``resource-denied``, then the end."""
        self._reason = "other"
        message = self._messages(deframer)
        if message is None:
            return
        attributes = root_attributes(message, self._env.limits)
        item = ErrorItem(
            ErrorType.PROTOCOL,
            "resource-denied",
            f"the server has {self._env.max_sessions} sessions open; try again later",
        )
        self._errors(attributes, (item,))

    def _handle(self, message: bytes) -> bool:
        """Answer one message; True when the session is to close."""
        counters = self._info.counters
        counters.in_rpcs += 1
        try:
            root = parse_xml(message, self._env.limits)
            rpc = parse_rpc(root if self._env.strict else qualify_rpc(root))
        except CatsError as exc:
            counters.in_bad_rpcs += 1
            self._errors(root_attributes(message, self._env.limits), exc.items)
            return False
        caller = Caller(self.session_id, self._principal.user, self._principal, self._subscribe)
        name = str(rpc.operation.tag).rpartition("}")[2]
        label = name if name in BASE_OPERATIONS else "rpc"
        started = time.perf_counter()
        try:
            with audit.annotated(operation=name):
                outcome = self._env.operations.dispatch(caller, rpc.operation)
        except CatsError as exc:
            NETCONF_RPCS.labels(label, "error").inc()
            self._errors(rpc.attributes, exc.items)
            return False
        except Exception:
            NETCONF_RPCS.labels(label, "error").inc()
            LOG.exception("session %d: operation failed unexpectedly", self.session_id)
            item = ErrorItem(ErrorType.APPLICATION, "operation-failed", "internal error")
            self._errors(rpc.attributes, (item,))
            return False
        NETCONF_LATENCY.labels(label).observe(time.perf_counter() - started)
        NETCONF_RPCS.labels(label, "ok").inc()
        self._send(outcome.serialize(to_bytes(reply(rpc.attributes, outcome.children))))
        self._start_notifications()
        return outcome.close

    def _errors(
        self, attributes: tuple[tuple[str, str], ...], items: tuple[ErrorItem, ...]
    ) -> None:
        self._info.counters.out_rpc_errors += 1
        self._send(to_bytes(error_reply(attributes, items, self._env.namespace_of)))

    def _framing_failed(self, exc: FramingError) -> None:
        LOG.info("session %d: closed on bad framing: %s", self.session_id, exc)
        self._reason = "other"
        items = tuple(ErrorItem(ErrorType.RPC, i.tag, i.message) for i in exc.items)
        with contextlib.suppress(OSError):  # our framing is intact even though the client's broke
            self._errors((), items)

    # ---------------------------------------------------------------- notifications

    def _subscribe(self, request: SubscriptionRequest) -> None:
        if self._subscription is not None or self._pending is not None:
            raise netconf_error(
                "operation-failed",
                "this session already has a subscription",
                error_type=ErrorType.APPLICATION,
            )
        xpath = request.filter.xpath if request.filter is not None else None
        subscription = self._env.core.subscribe(
            request.stream,
            start_time=request.start_time,
            stop_time=request.stop_time,
            xpath_filter=self._env.resolve_xpath(xpath) if xpath else None,
            principal=self._principal,
        )
        self._pending = (subscription, request)

    def _start_notifications(self) -> None:
        if self._pending is None:
            return
        subscription, request = self._pending
        self._pending = None
        self._subscription = subscription
        worker = threading.Thread(
            target=self._deliver,
            args=(subscription, request),
            name=f"netconf-notify-{self.session_id}",
            daemon=True,
        )
        worker.start()

    def _deliver(self, subscription: Subscription, request: SubscriptionRequest) -> None:
        try:
            for event in subscription:
                message = notification_message(event, self._env.to_xml, request.filter)
                if message is not None:
                    self._send(to_bytes(message))
                    self._info.counters.out_notifications += 1
            if request.stop_time is not None:
                self._send(to_bytes(complete_message()))
        except (OSError, EOFError):
            pass
        except CatsError:
            LOG.exception("session %d: notification delivery failed", self.session_id)

    # ---------------------------------------------------------------- the end

    def _kill(self, killed_by: int) -> None:
        """RFC 6241 7.9: abort the session and release its locks before the killer is answered.

        The session's own thread finishes the rest (:meth:`_end`) when its channel closes.
        """
        self._killed_by = killed_by
        self._reason = "killed"
        by = f"session {killed_by}" if killed_by else "the server (its user was deleted)"
        detail = f"session {self.session_id} of {self._principal.user} killed by {by}"
        audit.record(Event.KILL_SESSION, self._principal.user, detail=detail)
        self._close_channel()
        self._audit_broken_locks()  # released here, so the session's own end finds none
        self._env.core.release_session(str(self.session_id))

    def _close_channel(self) -> None:
        """Close the SSH channel; a peer that is already gone is not an error."""
        with contextlib.suppress(OSError, EOFError):
            self._channel.close()

    def _end(self) -> None:
        env = self._env
        if self._subscription is not None:
            self._subscription.close()
        if self._pending is not None:
            self._pending[0].close()
        try:
            env.confirmed.session_ended(Actor(self.session_id, self._principal.user))
            self._audit_broken_locks()
            env.core.release_session(str(self.session_id))
        except CatsError:
            LOG.exception("session %d: releasing its locks failed", self.session_id)
        known = env.registry.get(self.session_id) is not None
        env.registry.remove(self.session_id, dropped=self._reason == "dropped")
        if known:
            self._announce_end()
        self._close_channel()

    def _audit_broken_locks(self) -> None:
        """A session that ends holding locks breaks them (RFC 6241 7.5: released)."""
        session = str(self.session_id)
        for datastore, holder in self._env.core.lock_holders().items():
            if holder == session:
                detail = f"lock of {datastore} released: session {session} ended ({self._reason})"
                audit.record(
                    Event.LOCK_BROKEN,
                    self._principal.user,
                    detail=detail,
                    session=session,
                    transport="netconf",
                )

    def _announce_start(self) -> None:
        audit.record(Event.SESSION_START, self._principal.user, detail="netconf session")
        self._announce("netconf-session-start", {})

    def _announce_end(self) -> None:
        detail = f"netconf session ended: {self._reason}"
        audit.record(Event.SESSION_END, self._principal.user, detail=detail)
        extra: dict[str, object] = {"termination-reason": self._reason}
        if self._killed_by:  # 0: the server ended it (its user was deleted); no session did
            extra["killed-by"] = self._killed_by
        self._announce("netconf-session-end", extra)

    def _announce(self, name: str, extra: dict[str, object]) -> None:
        body: dict[str, object] = {
            "username": self._principal.user,
            "session-id": self.session_id,
            "source-host": self._source,
            **extra,
        }
        try:
            self._env.events(json.dumps({f"{NOTIFICATIONS}:{name}": body}))
        except CatsError:
            LOG.exception("cannot publish %s", name)
