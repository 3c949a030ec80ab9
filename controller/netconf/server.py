"""The NETCONF SSH server (RFC 6242): paramiko transport, ``netconf`` subsystem, sessions.

A host key is generated once into the state directory. Each connection gets a thread that
runs the SSH handshake and then the NETCONF session. Before it authenticates, a connection
is bounded by :mod:`.ssh` (how many may be unauthenticated at once, in all and per source,
for how long, with how many attempts), apart from the sessions: a session past
``max_sessions`` is answered ``resource-denied`` and closed, and authenticated connections
past that and a small overflow are refused. Capabilities (RFC 6241 8, RFC 8526 2) are fixed
at start.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from controller.errors import CatsError, listen_error
from controller.netconf.bounds import (
    DEFAULT_ADDRESS,
    DEFAULT_MAX_MESSAGE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_PORT,
    LoginBounds,
)
from controller.netconf.messages import XmlLimits
from controller.netconf.session import NetconfSession, SessionEnv
from controller.netconf.ssh import TRANSPORT, Credentials, SshAuth, Startups

LOG = logging.getLogger(__name__)
HOST_KEY = "netconf-host-key"
HOST_KEY_ECDSA = "netconf-host-key-ecdsa"
ACCEPT_POLL_S = 0.2
SETTLE_POLL_S = 0.5  # how soon a connection that left before logging in is let go
PARAMIKO_SLACK_S = 5.0  # paramiko's own timeouts, past the login grace time
#: How long a session that ended waits for the client to close the connection first.
CLOSE_GRACE_S = 2.0
#: Connections past the session bound that are still served, to be told ``resource-denied``.
OVERFLOW = 16


@dataclass(frozen=True, slots=True)
class NetconfSettings:
    """Where NETCONF listens and its bounds (``port`` 0: NETCONF is off)."""

    address: str = DEFAULT_ADDRESS
    port: int = DEFAULT_PORT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    max_message_size: int = DEFAULT_MAX_MESSAGE
    logins: LoginBounds = field(default_factory=LoginBounds)
    limits: XmlLimits = field(default_factory=XmlLimits)
    #: RFC 6241 as written: refuse base elements without the base namespace (lenient.py).
    strict: bool = False


def host_keys(state_dir: Path) -> tuple[paramiko.PKey, ...]:
    """The server's host keys, loaded or generated once and kept: RSA 3072 and ECDSA P-256.

    The ECDSA key is for clients whose SSH library offers no RSA signature paramiko accepts
    (libssh2 1.10, under Debian 12's yangcli, signs RSA with SHA-1 only).
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    return (
        _host_key(state_dir / HOST_KEY, _rsa_key, lambda: paramiko.RSAKey.generate(3072)),
        _host_key(state_dir / HOST_KEY_ECDSA, _ecdsa_key, paramiko.ECDSAKey.generate),
    )


def _host_key(
    path: Path, load: Callable[[Path], paramiko.PKey], generate: Callable[[], paramiko.PKey]
) -> paramiko.PKey:
    if path.is_file():
        return load(path)
    key = generate()
    key.write_private_key_file(str(path))
    path.chmod(0o600)
    LOG.info("generated the NETCONF host key %s", path)
    return key


def _rsa_key(path: Path) -> paramiko.PKey:
    """The RSA host key of ``path``, without the consistency checks ``cryptography`` runs on
    a private key it loads (0.1 s of CPU for RSA 3072 on an idle core, 0.5 s at a busy
    start-up, before NETCONF listens). The key is the server's own, made by it or put there
    by its operator in a folder only they can write: nothing untrusted to check. A key in
    another format (OpenSSH's) takes paramiko's own loader."""
    try:
        key = serialization.load_pem_private_key(
            path.read_bytes(), password=None, unsafe_skip_rsa_key_validation=True
        )
    except (ValueError, TypeError, UnsupportedAlgorithm):
        key = None
    if isinstance(key, rsa.RSAPrivateKey):
        return paramiko.RSAKey(key=key)
    return paramiko.RSAKey.from_private_key_file(str(path))


def _ecdsa_key(path: Path) -> paramiko.PKey:
    return paramiko.ECDSAKey.from_private_key_file(str(path))


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
        self._authenticated = 0
        self._startups = Startups(settings.logins)
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
        address, port = self._settings.address, self._settings.port
        try:
            listener = socket.create_server((address, port), backlog=128)
        except OSError as exc:
            raise listen_error("NETCONF", address, port, exc, "--netconf-port") from None
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
            source = str(peer[0])
            if not self._startups.admit(source):
                self._credentials.count(TRANSPORT, "refused-connections")
                LOG.debug("refusing %s: too many unauthenticated connections", source)
                connection.close()
                continue
            with self._lock:
                full = self._authenticated >= self._settings.max_sessions + OVERFLOW
            if full:
                self._startups.done(source)
                LOG.warning("refusing %s: %d sessions already", source, self._authenticated)
                connection.close()
                continue
            connection.settimeout(None)
            worker = threading.Thread(
                target=self._connection, args=(connection, source), daemon=True
            )
            worker.start()

    def _connection(self, connection: socket.socket, peer: str) -> None:
        bounds = self._settings.logins
        auth = SshAuth(self._credentials, peer, bounds, self._startups)
        transport = paramiko.Transport(connection)
        with self._lock:
            self._transports.add(transport)
        authenticated = False
        try:
            for key in self._keys:
                transport.add_server_key(key)
            late = bounds.login_grace_time + PARAMIKO_SLACK_S  # the grace time cuts first
            transport.banner_timeout = transport.handshake_timeout = transport.auth_timeout = late
            transport.start_server(threading.Event(), server=auth)  # returns at once
            if not _settled(transport, auth, bounds.login_grace_time):
                return
            assert auth.user is not None
            assert auth.channel is not None
            with self._lock:
                self._authenticated += 1
            authenticated = True
            principal = self._credentials.principal(auth.user, TRANSPORT, peer)
            NetconfSession(self._env, auth.channel, principal, peer).run()
            _await_peer_close(transport)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            LOG.debug("connection from %s ended: %s", peer, exc)
        except CatsError as exc:  # in a cluster: no session id, etcd is unreachable
            LOG.warning("connection from %s refused: %s", peer, exc)
        finally:
            auth.release()
            transport.close()
            with self._lock:
                self._transports.discard(transport)
                self._authenticated -= authenticated


def _settled(transport: paramiko.Transport, auth: SshAuth, grace: float) -> bool:
    """Wait until the connection opened its ``netconf`` subsystem (True), used up its
    attempts, left, or let its login grace time pass."""
    deadline = time.monotonic() + grace
    while not auth.settled.wait(min(SETTLE_POLL_S, max(0.0, deadline - time.monotonic()))):
        if not transport.is_active():
            return False
        if time.monotonic() >= deadline:
            LOG.info("closing %s: not logged in within %.0f s", auth.source, grace)
            auth.count("timed-out")
            return False
    if auth.exhausted:
        LOG.info("closing %s: %d failed login attempts", auth.source, auth.failures)
        auth.count("timed-out")
        return False
    return auth.channel is not None


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
