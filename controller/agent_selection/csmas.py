"""The C-PS's sessions to the C-SMAs, logged in with the credentials configured for each.

:class:`ConfiguredStateAgents` serves the :class:`~controller.southbound.StateAgents` seam
(query-state, reserve-state, release-state; agent-selection-mapping 9.1) with one
:class:`~controller.southbound.NetconfStateAgents` per set of credentials: the
``candidates/candidate/c-sma`` ``username`` and ``password`` of running, as the steering
module's forwarder inventory carries its own. A C-SMA without configured credentials is an
error of the call (the C-PS treats it as it treats an unreachable C-SMA: presence unknown, a
reservation not made); the sessions of credentials no longer configured are closed. The
libyang context that checks the calls is compiled on the first call, not at start-up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from controller.agent_selection.config import AgentConfig
from controller.errors import ErrorItem, ErrorType
from controller.model import Schema
from controller.southbound import (
    Credentials,
    NetconfStateAgents,
    PeerSettings,
    PeerUnreachableError,
    StateAgents,
    Target,
)
from controller.types import Json


class Login(Protocol):
    """Makes the StateAgents that log in with one set of credentials."""

    def __call__(self, credentials: Credentials, /) -> StateAgents:
        """The sessions of ``credentials`` (connected on first use)."""
        ...

    def close(self) -> None:
        """Free what the sessions shared, once every one of them is closed."""
        ...


def _no_login(target: Target) -> PeerUnreachableError:
    message = f"no username is configured for the C-SMA {target.name} ({target.address})"
    return PeerUnreachableError(
        ErrorItem(ErrorType.APPLICATION, "operation-failed", message, app_tag="no-credentials")
    )


class NetconfLogins:
    """:class:`Login` over NETCONF: every session checked by one schema, compiled on first use."""

    def __init__(self, settings: PeerSettings | None = None) -> None:
        self._settings = settings or PeerSettings()
        self._guard = threading.Lock()
        self._schema: Schema | None = None

    def __call__(self, credentials: Credentials) -> StateAgents:
        """The sessions of ``credentials``."""
        with self._guard:
            if self._schema is None:
                self._schema = Schema()
            return NetconfStateAgents(credentials, self._settings, self._schema)

    def close(self) -> None:
        """Free the schema (after every session made here is closed)."""
        with self._guard:
            schema, self._schema = self._schema, None
        if schema is not None:
            schema.close()


class ConfiguredStateAgents:
    """StateAgents towards the C-SMAs, each logged in at as its configuration says."""

    def __init__(self, config: Callable[[], AgentConfig], login: Login) -> None:
        self._config = config
        self._login = login
        self._guard = threading.Lock()
        self._agents: dict[Credentials, StateAgents] = {}
        self._seen: AgentConfig | None = None

    def _for(self, target: Target) -> StateAgents:
        config = self._config()
        credentials = config.logins.get(target)
        if credentials is None:
            raise _no_login(target)
        stale: list[StateAgents] = []
        with self._guard:
            if config is not self._seen:  # a new revision of running: drop old logins
                self._seen = config
                wanted = set(config.logins.values())
                stale = [a for c, a in self._agents.items() if c not in wanted]
                self._agents = {c: a for c, a in self._agents.items() if c in wanted}
            agents = self._agents.get(credentials)
            if agents is None:
                agents = self._agents[credentials] = self._login(credentials)
        for old in stale:
            old.close()
        return agents

    def query_state(self, target: Target, members: Json) -> Json:
        """query-state (MSG-5/6)."""
        return self._for(target).query_state(target, members)

    def reserve_state(self, target: Target, members: Json) -> Json:
        """reserve-state (MSG-11/12)."""
        return self._for(target).reserve_state(target, members)

    def release_state(self, target: Target, members: Json) -> Json:
        """release-state (MSG-16)."""
        return self._for(target).release_state(target, members)

    def close(self) -> None:
        """Close every session, then what they shared."""
        with self._guard:
            agents, self._agents = list(self._agents.values()), {}
        for each in agents:
            each.close()
        self._login.close()
