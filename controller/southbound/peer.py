"""A persistent NETCONF session to one peer, with reconnect and backoff (RFC 6241, RFC 6242).

:class:`NetconfPeer` is the few lines of I/O around :class:`~controller.southbound.codec.RpcCodec`:
it connects on first use, keeps the ncclient session, reconnects after a transport failure and
backs off exponentially between failed attempts (a call during the backoff fails at once, so a
dead agent does not stall every decision). Every ncclient, paramiko and socket exception is
translated here; only :class:`~controller.southbound.errors.SouthboundError` leaves.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import paramiko
from ncclient import manager
from ncclient.operations.errors import OperationError, TimeoutExpiredError
from ncclient.operations.rpc import RPCError
from ncclient.transport import session as ncclient_session
from ncclient.transport.errors import TransportError

from controller.errors import CatsError, ErrorItem, ErrorType
from controller.southbound.codec import RpcCodec
from controller.southbound.errors import PeerRefusedError, invalid, unreachable
from controller.types import Json

_TRANSPORT = (TransportError, OperationError, TimeoutExpiredError, paramiko.SSHException)
_T = TypeVar("_T")


#: How long ncclient's session thread may sleep in select before it sends a queued request.
#: ncclient's default (0.1 s) makes every RPC wait up to 100 ms, so a push of five RPCs (lock,
#: edit-config, confirmed commit, confirming commit, unlock) took ~0.5 s; 10 ms keeps the idle
#: cost small (100 wake-ups per second per session) and a push at tens of milliseconds.
NCCLIENT_TICK = 0.01


def _shorten_ncclient_tick(tick: float) -> None:
    """Lower ncclient's (process-wide) select tick to at most ``tick`` seconds."""
    ncclient_session.TICK = min(float(ncclient_session.TICK), tick)


@dataclass(frozen=True, slots=True)
class Credentials:
    """The SSH user the C-PS logs in as at a peer: with a private key file when one is
    configured (public-key authentication), else with the password (in clear here: it was
    decrypted from running for this use only, and is never printed)."""

    username: str
    password: str = field(default="", repr=False)
    key_file: str | None = None

    @classmethod
    def of(cls, item: Mapping[str, Any], reveal: Callable[[str], str]) -> Credentials:
        """The credentials of a configured login (``username``, ``password``,
        ``private-key-file``); ``reveal`` decrypts the stored password."""
        password = str(item.get("password", ""))
        key_file = item.get("private-key-file")
        return cls(
            str(item["username"]),
            reveal(password) if password else "",
            None if key_file is None else str(key_file),
        )


def private_key_file(path: str) -> str:
    """A private key file the C-PS may use: it exists and only its owner can read it (as
    OpenSSH refuses a key that others can read); an OSError naming what to do otherwise."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise OSError(f"private key file {path}: {exc.strerror}") from exc
    if stat.S_IMODE(mode) & 0o077:
        raise OSError(
            f"private key file {path} is readable by others (mode {stat.S_IMODE(mode):o}); "
            f"chmod 600 {path}"
        )
    return path


@dataclass(frozen=True, slots=True)
class PeerSettings:
    """Timeouts and the reconnect backoff (seconds): ``backoff`` doubles up to ``max_backoff``."""

    timeout: float = 5.0
    backoff: float = 0.2
    max_backoff: float = 10.0


def _item(error: Any) -> ErrorItem:
    kind = str(getattr(error, "type", None) or "application")
    known = {member.value for member in ErrorType}
    return ErrorItem(
        ErrorType(kind) if kind in known else ErrorType.APPLICATION,
        str(getattr(error, "tag", None) or "operation-failed"),
        str(getattr(error, "message", None) or ""),
        getattr(error, "path", None),
        getattr(error, "app_tag", None),
    )


class NetconfPeer:
    """RPCs over one NETCONF session to ``host:port``; thread-safe, one call at a time."""

    def __init__(
        self,
        address: tuple[str, int],
        credentials: Credentials,
        codec: RpcCodec,
        *,
        settings: PeerSettings = PeerSettings(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = f"{address[0]}:{address[1]}"
        self._address = address
        self._credentials = credentials
        self._codec = codec
        self._settings = settings
        self._clock = clock
        _shorten_ncclient_tick(NCCLIENT_TICK)  # every southbound session: C-SMAs, forwarders
        self._guard = threading.Lock()
        self._session: Any = None
        self._delay = 0.0
        self._retry_at = 0.0

    def call(self, name: str, members: Json) -> Json:
        """Invoke ``module:operation`` with ``members``; its output members.

        Raises:
            ReplyInvalidError: the input or the reply is not valid against the schema.
            PeerRefusedError: the peer answered with rpc-errors (its items).
            PeerUnreachableError: no session could be had or it broke during the call.
        """
        try:
            request = self._codec.request(name, members)
        except CatsError as exc:
            raise invalid(self.name, exc.items, f"request {name}") from exc
        with self._guard:
            reply = self._dispatch(name, request)
        try:
            return self._codec.reply(name, reply)
        except CatsError as exc:
            raise invalid(self.name, exc.items, f"reply to {name}") from exc

    def run(self, name: str, operation: Callable[[Any], _T]) -> _T:
        """``operation(manager)`` with the live ncclient manager, under the lock, with the
        reconnect, backoff and error translation of :meth:`call`. For the adapters of this
        package (controller.southbound.session): the manager must not leave ``operation``.

        Raises:
            PeerRefusedError: the peer answered with rpc-errors (its items).
            PeerUnreachableError: no session could be had or it broke during the operation.
        """
        with self._guard:
            now = self._clock()
            if self._session is None and now < self._retry_at:
                raise unreachable(self.name, f"backing off {self._retry_at - now:.2f} s")
            try:
                result = operation(self._connect())
            except RPCError as exc:
                errors = getattr(exc, "errors", None) or [exc]
                raise PeerRefusedError(*(_item(error) for error in errors)) from exc
            except (*_TRANSPORT, OSError, EOFError) as exc:
                self._failed(now)
                raise unreachable(self.name, f"{name}: {exc}") from exc
            self._delay = 0.0
            return result

    def _dispatch(self, name: str, request: Any) -> bytes:
        """Send under the lock; a transport failure closes the session and backs off."""
        now = self._clock()
        if self._session is None and now < self._retry_at:
            raise unreachable(self.name, f"backing off {self._retry_at - now:.2f} s")
        try:
            session = self._connect()
            reply = session.dispatch(request)
        except RPCError as exc:
            errors = getattr(exc, "errors", None) or [exc]
            raise PeerRefusedError(*(_item(error) for error in errors)) from exc
        except (*_TRANSPORT, OSError, EOFError) as exc:
            self._failed(now)
            raise unreachable(self.name, f"{name}: {exc}") from exc
        self._delay = 0.0
        xml = getattr(reply, "xml", None)
        return xml.encode() if isinstance(xml, str) else bytes(xml or b"")

    def _connect(self) -> Any:
        if self._session is None or not self._session.connected:
            host, port = self._address
            self._session = manager.connect(
                host=host,
                port=port,
                username=self._credentials.username,
                **self._secret(),
                hostkey_verify=False,
                allow_agent=False,
                look_for_keys=False,
                timeout=self._settings.timeout,
            )
            self._session.timeout = self._settings.timeout
        return self._session

    def _secret(self) -> dict[str, Any]:
        """The key file or the password ncclient logs in with."""
        credentials = self._credentials
        if credentials.key_file is not None:
            return {"key_filename": private_key_file(credentials.key_file), "password": None}
        return {"password": credentials.password}

    def _failed(self, now: float) -> None:
        self._drop()
        settings = self._settings
        self._delay = min(max(self._delay * 2, settings.backoff), settings.max_backoff)
        self._retry_at = now + self._delay

    def _drop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(*_TRANSPORT, RPCError, OSError, EOFError):
                if session.connected:
                    session.close_session()

    def close(self) -> None:
        """Close the session (if any)."""
        with self._guard:
            self._drop()
