"""A NETCONF event subscription to one peer, kept up and replayed after a reconnect (RFC 5277).

:class:`Subscription` is a thread with a session of its own (the RPC session of
:class:`~controller.southbound.peer.NetconfPeer` stays free for calls): it connects,
``create-subscription`` (with a subtree filter naming the events it wants, RFC 5277 3.6),
and hands every event, parsed and validated by the codec, to
its :class:`Listener`. ``on_up`` is called once the subscription stands (after
``replayComplete`` when it replays), ``on_down`` as soon as it is lost: until it stands
again, its consumer must not rely on having seen every event. A lost session is reconnected
with exponential backoff, and the new subscription asks for replay from the last event seen
(or from the loss), so changes during the gap arrive after all. Every ncclient and socket
exception stays here.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ncclient import manager

from controller.errors import CatsError
from controller.southbound.codec import RpcCodec
from controller.southbound.peer import Credentials, PeerSettings, private_key_file
from controller.types import Json

LOG = logging.getLogger("catsctl.southbound.subscription")


@dataclass(frozen=True, slots=True)
class Listener:
    """What the subscription calls: each event (``module:name``, members), and when it starts
    and stops being live (every event since it started was delivered)."""

    on_event: Callable[[str, Json], None]
    on_up: Callable[[], None]
    on_down: Callable[[], None]


POLL_S = 0.5  # how often the thread looks at its stop flag while no event comes
REPLAY_MARGIN = timedelta(seconds=1)  # clocks of two processes of one site may differ
REPLAY_COMPLETE = "netmod:replayComplete"


class Subscription:
    """The NETCONF stream of one peer, delivered to a listener until :meth:`close`."""

    def __init__(  # noqa: PLR0913 - the peer, its login, the codec, the listener, options
        self,
        address: tuple[str, int],
        credentials: Credentials,
        codec: RpcCodec,
        listener: Listener,
        *,
        settings: PeerSettings | None = None,
        subtree: str | None = None,
    ) -> None:
        self.name = f"{address[0]}:{address[1]}"
        self._address, self._credentials, self._codec = address, credentials, codec
        self._listener, self._settings = listener, settings or PeerSettings()
        self._filter = None if subtree is None else ("subtree", subtree)
        self._stop = threading.Event()
        self._last: datetime | None = None  # the event time of the last event seen
        self._thread = threading.Thread(target=self._run, name=f"subscribe-{self.name}")
        self._thread.daemon = True

    def start(self) -> None:
        """Start subscribing (in the background)."""
        self._thread.start()

    def close(self) -> None:
        """Stop; the consumer is told the subscription is no longer live."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        delay = 0.0
        while not self._stop.is_set():
            session: Any = None
            try:
                session = self._connect()
                start = None if self._last is None else self._last - REPLAY_MARGIN
                session.create_subscription(
                    filter=self._filter,
                    start_time=None if start is None else start.isoformat().replace("+00:00", "Z"),
                )
                if start is None:
                    self._listener.on_up()
                delay = 0.0
                self._listen(session, replaying=start is not None)
            except Exception as exc:  # ncclient, paramiko and sockets alike
                LOG.warning("subscription to %s lost: %s", self.name, exc)
            finally:
                self._listener.on_down()
                if session is not None:
                    with contextlib.suppress(Exception):
                        session.close_session()
            if self._last is None:
                self._last = datetime.now(UTC)  # replay from the loss
            settings = self._settings
            delay = min(max(delay * 2, settings.backoff), settings.max_backoff)
            self._stop.wait(delay)

    def _listen(self, session: Any, *, replaying: bool) -> None:
        while not self._stop.is_set():
            if not session.connected:
                raise ConnectionError("session closed")
            note = session.take_notification(block=True, timeout=POLL_S)
            if note is None:
                continue
            xml = note.notification_xml
            try:
                event = self._codec.notification(xml)
            except CatsError as exc:  # an event of a module the schema lacks is not ours
                unknown = exc.items and exc.items[0].tag == "unknown-element"
                (LOG.debug if unknown else LOG.warning)(
                    "%s sent a notification not of the schema: %s", self.name, exc
                )
                continue
            if event is None or event[0].startswith("netmod:"):
                if replaying and event == (REPLAY_COMPLETE, {}):
                    replaying = False
                    self._listener.on_up()
                continue
            self._last = _event_time(note) or datetime.now(UTC)
            self._listener.on_event(*event)

    def _connect(self) -> Any:
        host, port = self._address
        credentials = self._credentials
        secret: dict[str, Any] = (
            {"key_filename": private_key_file(credentials.key_file), "password": None}
            if credentials.key_file is not None
            else {"password": credentials.password}
        )
        return manager.connect(
            host=host,
            port=port,
            username=credentials.username,
            **secret,
            hostkey_verify=False,
            allow_agent=False,
            look_for_keys=False,
            timeout=self._settings.timeout,
        )


def _event_time(note: Any) -> datetime | None:
    """The eventTime of a notification (RFC 5277 4), None when it cannot be read."""
    with contextlib.suppress(AttributeError, ValueError, TypeError):
        text = str(note.notification_ele.findtext("{*}eventTime"))
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return None
