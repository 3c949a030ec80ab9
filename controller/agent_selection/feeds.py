"""The C-PS's subscriptions to the C-SMAs' ``state-presence-changed`` (M42), one per C-SMA.

:class:`Feeds` keeps one subscription to every C-SMA that running names (with the credentials
configured for it, as the calls use), started and stopped as the configuration changes, and
feeds what they deliver into the :class:`~controller.agent_selection.presence.PresenceCache`.
The subscriptions themselves are made by a :class:`Subscribe` (the C-PS's is
:class:`NetconfSubscriptions`, over ncclient; without one, the cache never stands and every
decision asks, as before).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from controller.agent_selection.config import AgentConfig
from controller.agent_selection.presence import PresenceCache
from controller.agent_selection.values import MODULE
from controller.model import Schema
from controller.southbound import Credentials, PeerSettings, RpcCodec, Target
from controller.southbound.subscription import Listener, Subscription
from controller.types import Json

EVENT = f"{MODULE}:state-presence-changed"
SUBTREE = f'<state-presence-changed xmlns="urn:ietf:params:xml:ns:yang:{MODULE}"/>'  # RFC 5277


class Closable(Protocol):
    """A running subscription."""

    def close(self) -> None:
        """Stop it."""
        ...


class Subscribe(Protocol):
    """Starts a subscription to one C-SMA."""

    def __call__(self, target: Target, credentials: Credentials, listener: Listener) -> Closable:
        """Subscribe to ``target`` as ``credentials``; events go to ``listener``."""
        ...

    def close(self) -> None:
        """Free what the subscriptions shared, once each is closed."""
        ...


class NetconfSubscriptions:
    """:class:`Subscribe` over NETCONF: each notification checked by one schema, compiled on
    the first subscription."""

    def __init__(self, settings: PeerSettings | None = None) -> None:
        self._settings = settings or PeerSettings()
        self._guard = threading.Lock()
        self._schema: Schema | None = None
        self._codec: RpcCodec | None = None

    def __call__(self, target: Target, credentials: Credentials, listener: Listener) -> Closable:
        """A started subscription to ``target``."""
        with self._guard:
            if self._schema is None or self._codec is None:
                self._schema = Schema()
                self._codec = RpcCodec(self._schema.context)
            codec = self._codec
        made = Subscription(
            (target.address, target.port),
            credentials,
            codec,
            listener,
            settings=self._settings,
            subtree=SUBTREE,
        )
        made.start()
        return made

    def close(self) -> None:
        """Free the schema (after every subscription made here is closed)."""
        with self._guard:
            schema, self._schema, self._codec = self._schema, None, None
        if schema is not None:
            schema.close()


class Feeds:
    """One subscription per configured C-SMA, feeding the presence cache."""

    def __init__(
        self, subscribe: Subscribe | None, cache: PresenceCache, clock: Callable[[], float]
    ) -> None:
        self._subscribe, self._cache, self._clock = subscribe, cache, clock
        self._guard = threading.Lock()
        self._running: dict[tuple[Target, Credentials], Closable] = {}

    def sync(self, config: AgentConfig) -> None:
        """Subscribe to every C-SMA of ``config``; stop the subscriptions it no longer names."""
        if self._subscribe is None:
            return
        wanted = set(config.logins.items())
        with self._guard:
            gone = [(k, v) for k, v in self._running.items() if k not in wanted]
            for key, _ in gone:
                del self._running[key]
            new = [k for k in wanted if k not in self._running]
            for target, credentials in new:
                self._running[(target, credentials)] = self._subscribe(
                    target, credentials, self._listener(target)
                )
        for (target, _), running in gone:
            running.close()
            self._cache.down(target)

    def _listener(self, target: Target) -> Listener:
        def event(name: str, members: Json) -> None:
            if name == EVENT:
                self._cache.notified(target, members, self._clock())

        return Listener(
            event, lambda: self._cache.up(target, self._clock()), lambda: self._cache.down(target)
        )

    def close(self) -> None:
        """Stop every subscription."""
        with self._guard:
            running, self._running = list(self._running.values()), {}
        for each in running:
            each.close()
        if self._subscribe is not None:
            self._subscribe.close()
