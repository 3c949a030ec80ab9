"""The NETCONF SSH server (RFC 6242): paramiko transport, ``netconf`` subsystem, sessions.

A host key is generated once into the state directory. Each connection gets a thread that
runs the SSH handshake and then the NETCONF session. A session past ``max_sessions`` is
answered ``resource-denied`` and closed; connections past that and a small overflow are
refused at accept. Capabilities (RFC 6241 8, RFC 8526 2) are fixed at start.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import paramiko
from paramiko.common import (
    AUTH_FAILED,
    AUTH_SUCCESSFUL,
    OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED,
    OPEN_SUCCEEDED,
)

from controller.audit import login_failed
from controller.datastore.api import Principal
from controller.netconf.session import NetconfSession, SessionEnv

LOG = logging.getLogger(__name__)
DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 8830
DEFAULT_MAX_SESSIONS = 200
DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
HOST_KEY = "netconf-host-key"
HOST_KEY_ECDSA = "netconf-host-key-ecdsa"
HANDSHAKE_TIMEOUT_S = 30.0
ACCEPT_POLL_S = 0.2
#: How long a session that ended waits for the client to close the connection first.
CLOSE_GRACE_S = 2.0
#: Connections past the session bound that are still served, to be told ``resource-denied``.
OVERFLOW = 16


class Credentials(Protocol):
    """The local users SSH authenticates against (:class:`controller.auth.LocalUsers`)."""

    def check_password(self, user: str, password: str) -> bool:
        """Whether the password is the user's."""

    def check_key(self, user: str, algorithm: str, key_data: str) -> bool:
        """Whether the key (algorithm, base64 data) is one of the user's authorized keys."""

    def principal(self, user: str, transport: str, source: str) -> Principal:
        """The principal an authenticated user's session runs as."""


@dataclass(frozen=True, slots=True)
class NetconfSettings:
    """Where NETCONF listens and its bounds (``port`` 0: NETCONF is off)."""

    address: str = DEFAULT_ADDRESS
    port: int = DEFAULT_PORT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    max_message_size: int = DEFAULT_MAX_MESSAGE
    #: RFC 6241 as written: refuse base elements without the base namespace (lenient.py).
    strict: bool = False


def host_keys(state_dir: Path) -> tuple[paramiko.PKey, ...]:
    """The server's host keys, loaded or generated once and kept: RSA 3072 and ECDSA P-256.

    The ECDSA key is for clients whose SSH library offers no RSA signature paramiko accepts
    (libssh2 1.10, under Debian 12's yangcli, signs RSA with SHA-1 only).
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    return (
        _host_key(state_dir / HOST_KEY, paramiko.RSAKey, lambda: paramiko.RSAKey.generate(3072)),
        _host_key(state_dir / HOST_KEY_ECDSA, paramiko.ECDSAKey, paramiko.ECDSAKey.generate),
    )


def _host_key(
    path: Path, kind: type[paramiko.PKey], generate: Callable[[], paramiko.PKey]
) -> paramiko.PKey:
    if path.is_file():
        return kind.from_private_key_file(str(path))
    key = generate()
    key.write_private_key_file(str(path))
    path.chmod(0o600)
    LOG.info("generated the NETCONF host key %s", path)
    return key


def _refused_login(user: str, peer: str) -> None:
    """Audit a password that did not authenticate (a public key that does not is no failed
    login: clients offer their keys before they ask for a password)."""
    login_failed(user, "netconf", peer)


class _SshServer(paramiko.ServerInterface):
    """Authentication and channel policy of one connection."""

    def __init__(self, credentials: Credentials, peer: str = "") -> None:
        self._credentials = credentials
        self._peer = peer
        self.user: str | None = None
        self.channel: paramiko.Channel | None = None
        self.ready = threading.Event()

    def get_allowed_auths(self, username: str) -> str:
        del username
        return "password,publickey"

    def check_auth_password(self, username: str, password: str) -> int:
        if self._credentials.check_password(username, password):
            self.user = username
            return AUTH_SUCCESSFUL
        _refused_login(username, self._peer)
        return AUTH_FAILED

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        if self._credentials.check_key(username, key.get_name(), key.get_base64()):
            self.user = username
            return AUTH_SUCCESSFUL
        return AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        del chanid
        if kind == "session":
            return OPEN_SUCCEEDED
        return OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_subsystem_request(self, channel: paramiko.Channel, name: str) -> bool:
        if name != "netconf" or self.channel is not None:
            return False
        self.channel = channel
        self.ready.set()
        return True


class NetconfServer:
    """Listens for SSH connections and runs a NETCONF session on each."""

    def __init__(
        self,
        env: SessionEnv,
        settings: NetconfSettings,
        state_dir: Path,
        credentials: Credentials,
    ) -> None:
        self._env = env
        self._settings = settings
        self._state_dir = state_dir
        self._keys: tuple[paramiko.PKey, ...] = ()  # read or made when listening starts
        self._credentials = credentials
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._transports: set[paramiko.Transport] = set()
        self._stopping = threading.Event()

    @property
    def port(self) -> int:
        """The port listened on (the bound one when the settings asked for any)."""
        return self._socket.getsockname()[1] if self._socket else self._settings.port

    def start(self) -> None:
        """Read (or make, the first time) the host keys, bind and start accepting in a
        background thread. A server that never starts (``--netconf-port 0``) makes no keys."""
        self._keys = host_keys(self._state_dir)
        if not LOG.isEnabledFor(logging.DEBUG):  # paramiko logs every port probe as an error
            logging.getLogger("paramiko").setLevel(logging.CRITICAL)
        listener = socket.create_server((self._settings.address, self._settings.port), backlog=128)
        listener.settimeout(ACCEPT_POLL_S)  # so that stop() is seen at once
        self._socket = listener
        self._thread = threading.Thread(target=self._accept, name="netconf-accept", daemon=True)
        self._thread.start()
        LOG.info("NETCONF over SSH on %s:%d", self._settings.address, self.port)

    def stop(self) -> None:
        """Stop accepting and end every session."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._socket is not None:
            self._socket.close()
        with self._lock:
            transports = list(self._transports)
        for transport in transports:
            transport.close()
        self._env.confirmed.close()

    def _accept(self) -> None:
        assert self._socket is not None
        while not self._stopping.is_set():
            try:
                connection, peer = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connection.settimeout(None)
            with self._lock:
                full = len(self._transports) >= self._settings.max_sessions + OVERFLOW
            if full:
                LOG.warning("refusing %s: %d sessions already", peer[0], len(self._transports))
                connection.close()
                continue
            worker = threading.Thread(
                target=self._connection, args=(connection, peer[0]), daemon=True
            )
            worker.start()

    def _connection(self, connection: socket.socket, peer: str) -> None:
        transport = paramiko.Transport(connection)
        with self._lock:
            self._transports.add(transport)
        try:
            for key in self._keys:
                transport.add_server_key(key)
            server = _SshServer(self._credentials, peer)
            transport.start_server(server=server)
            channel = transport.accept(HANDSHAKE_TIMEOUT_S)
            if channel is None or not server.ready.wait(HANDSHAKE_TIMEOUT_S):
                return
            assert server.user is not None
            assert server.channel is not None
            principal = self._credentials.principal(server.user, "netconf", peer)
            NetconfSession(self._env, server.channel, principal, peer).run()
            _await_peer_close(transport)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            LOG.debug("connection from %s ended: %s", peer, exc)
        finally:
            transport.close()
            with self._lock:
                self._transports.discard(transport)


def _await_peer_close(transport: paramiko.Transport) -> None:
    """Let the client close the connection after the last reply (RFC 6242 3.2 ends a session
    by closing the channel; the client then closes SSH).

    Closing the socket at once would make the kernel answer the client's channel close, still
    on its way, with a TCP reset; the transport's own thread reads it meanwhile.
    """
    if not transport.is_active():
        return
    transport.join(CLOSE_GRACE_S)


def capabilities(yang_library: str, content_id: str, extra: Sequence[str] = ()) -> tuple[str, ...]:
    """Every capability served (RFC 6241 8, RFC 6243 4, RFC 5277 3.1, RFC 8526 2)."""
    base = "urn:ietf:params:netconf"
    cap = f"{base}:capability"
    return (
        f"{base}:base:1.0",
        f"{base}:base:1.1",
        f"{cap}:writable-running:1.0",
        f"{cap}:candidate:1.0",
        f"{cap}:confirmed-commit:1.0",
        f"{cap}:confirmed-commit:1.1",
        f"{cap}:rollback-on-error:1.0",
        f"{cap}:validate:1.0",
        f"{cap}:validate:1.1",
        f"{cap}:startup:1.0",
        f"{cap}:xpath:1.0",
        f"{cap}:with-defaults:1.0?basic-mode=explicit"
        "&also-supported=report-all,report-all-tagged,trim",
        f"{cap}:notification:1.0",
        f"{cap}:interleave:1.0",
        f"{cap}:yang-library:1.1?revision={yang_library}&content-id={content_id}",
        *extra,
    )
