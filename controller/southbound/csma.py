"""The C-PS's calls to the C-SMAs: query-state, reserve-state, release-state (agent draft 9.1).

:class:`StateAgents` is the seam the handoff logic is written (and unit-tested) against;
:class:`NetconfStateAgents` serves it with one persistent :class:`NetconfPeer` per C-SMA.
Inputs and outputs are the RPCs' RFC 7951 members, validated against ietf-cats-agent-selection
on the way out and on the way back. :func:`fan_out` runs one call per target and returns a
result per target, as nornir's ``AggregatedResult`` does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from controller.errors import CatsError, ErrorItem
from controller.model import Schema
from controller.southbound.codec import RpcCodec
from controller.southbound.errors import SouthboundError
from controller.southbound.peer import Credentials, NetconfPeer, PeerSettings
from controller.types import Json

MODULE = "ietf-cats-agent-selection"
QUERY_STATE = f"{MODULE}:query-state"
RESERVE_STATE = f"{MODULE}:reserve-state"
RELEASE_STATE = f"{MODULE}:release-state"


@dataclass(frozen=True, slots=True)
class Target:
    """A C-SMA as the candidates configuration names it (``c-sma`` name, address, port)."""

    name: str
    address: str
    port: int = 830


class StateAgents(Protocol):
    """MSG-5/6, MSG-11/12 and MSG-16 towards one C-SMA; raises SouthboundError on failure."""

    def query_state(self, target: Target, members: Json) -> Json:
        """query-state (MSG-5), its output (MSG-6)."""
        ...

    def reserve_state(self, target: Target, members: Json) -> Json:
        """reserve-state (MSG-11), its output (MSG-12)."""
        ...

    def release_state(self, target: Target, members: Json) -> Json:
        """release-state (MSG-16)."""
        ...

    def close(self) -> None:
        """Close every session to the C-SMAs."""
        ...


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of one call to one target: its output, or the error it failed with."""

    target: Target
    output: Json | None = None
    error: SouthboundError | None = None

    @property
    def failed(self) -> bool:
        """Whether the call failed."""
        return self.error is not None


@dataclass(frozen=True, slots=True)
class Results:
    """A result per target, in the order the calls were given (nornir AggregatedResult)."""

    results: tuple[Result, ...]

    @property
    def failed(self) -> tuple[Result, ...]:
        """The calls that failed."""
        return tuple(r for r in self.results if r.failed)

    def raise_on_error(self) -> None:
        """Raise one SouthboundError holding the items of every failed call."""
        items: list[ErrorItem] = [i for r in self.failed if r.error for i in r.error.items]
        if items:
            raise SouthboundError(*items)


def fan_out(
    call: Callable[[Target, Json], Json], requests: Iterable[tuple[Target, Json]]
) -> Results:
    """``call`` for each (target, members), sequentially; a failure does not stop the rest."""
    results: list[Result] = []
    for target, members in requests:
        try:
            results.append(Result(target, call(target, members)))
        except SouthboundError as exc:
            results.append(Result(target, error=exc))
    return Results(tuple(results))


class NetconfStateAgents:
    """:class:`StateAgents` over NETCONF: one persistent peer per (address, port)."""

    def __init__(
        self,
        credentials: Credentials,
        settings: PeerSettings | None = None,
        schema: Schema | None = None,
    ) -> None:
        self._own = schema is None
        self._schema = schema if schema is not None else Schema()
        self._codec = RpcCodec(self._schema.context)
        self._credentials = credentials
        self._settings = settings or PeerSettings()
        self._guard = threading.Lock()
        self._peers: dict[tuple[str, int], NetconfPeer] = {}

    def _peer(self, target: Target) -> NetconfPeer:
        key = (target.address, target.port)
        with self._guard:
            peer = self._peers.get(key)
            if peer is None:
                peer = NetconfPeer(key, self._credentials, self._codec, settings=self._settings)
                self._peers[key] = peer
            return peer

    def _call(self, target: Target, name: str, members: Json) -> Json:
        try:
            return self._peer(target).call(name, members)
        except SouthboundError:
            raise
        except CatsError as exc:  # pragma: no cover - every path above translates already
            raise SouthboundError(*exc.items) from exc

    def query_state(self, target: Target, members: Json) -> Json:
        """query-state (MSG-5/6)."""
        return self._call(target, QUERY_STATE, members)

    def reserve_state(self, target: Target, members: Json) -> Json:
        """reserve-state (MSG-11/12)."""
        return self._call(target, RESERVE_STATE, members)

    def release_state(self, target: Target, members: Json) -> Json:
        """release-state (MSG-16)."""
        return self._call(target, RELEASE_STATE, members)

    def close(self) -> None:
        """Close every session (and the schema, when this adapter compiled it)."""
        with self._guard:
            peers, self._peers = list(self._peers.values()), {}
        for peer in peers:
            peer.close()
        if self._own:
            self._schema.close()
