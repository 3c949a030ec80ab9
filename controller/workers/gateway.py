"""The core's end of its RESTCONF workers: it answers what they send, one thread per
connection (each worker thread holds one), with the same application that answers RESTCONF in
one process, so authentication, access control, audit and metrics are the core's own."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection, Listener, answer_challenge, deliver_challenge
from pathlib import Path

from controller.datastore.core import Core
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.observability.metrics import RESTCONF_WORKER_MESSAGES
from controller.restconf.auth import ConnectionMemo
from controller.restconf.errors import status_of
from controller.restconf.http import HttpReply, HttpRequest
from controller.restconf.wsgi import RestconfApp, is_public
from controller.workers.link import (
    FAMILY,
    Answer,
    Failed,
    Forwarded,
    Output,
    Ready,
    Reply,
    StreamHead,
    Validated,
)

LOG = logging.getLogger(__name__)
#: How long a new connection has to answer the challenge.
HANDSHAKE_S = 5.0
#: Connections answering the challenge at once; more are closed at accept.
MAX_HANDSHAKES = 64
VALIDATED = RESTCONF_WORKER_MESSAGES.labels("validated")
FORWARDED = RESTCONF_WORKER_MESSAGES.labels("forwarded")
CHECKED = RESTCONF_WORKER_MESSAGES.labels("credentials")


class Gateway:
    """Listens for worker connections and answers their messages.

    The socket is a file in a directory only this user may enter (a fresh ``mkdtemp``), and a
    connection must answer an HMAC challenge on :attr:`authkey` before it is served. The
    challenge runs on the connection's own thread within HANDSHAKE_S, so a peer that connects
    and stays silent holds nothing but its thread, and at most MAX_HANDSHAKES do at once.
    """

    def __init__(self, app: RestconfApp, core: Core, on_ready: Callable[[int], None]) -> None:
        self._app = app
        self._core = core
        self._on_ready = on_ready
        self.authkey = secrets.token_bytes(32)
        self._folder = Path(tempfile.mkdtemp(prefix="cats-restconf-"))  # mode 0700
        self.address = str(self._folder / "gateway")
        self._listener = Listener(self.address, family=FAMILY)  # the challenge: _handshake
        self._open: set[Connection] = set()
        self._guard = threading.Lock()
        self._handshakes = threading.BoundedSemaphore(MAX_HANDSHAKES)
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="restconf-gateway", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop accepting and close every connection (their threads end)."""
        with self._guard:
            self._closed = True
            open_now = list(self._open)
        with contextlib.suppress(OSError):
            self._listener.close()  # removes the socket's file
        for connection in open_now:
            with contextlib.suppress(OSError):
                connection.close()
        self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self._folder.rmdir()

    def _accept(self) -> None:
        while True:
            try:
                connection = self._listener.accept()
            except OSError:  # closed
                return
            if not self._handshakes.acquire(blocking=False):
                LOG.warning("too many connections to the RESTCONF worker gateway at once")
                connection.close()
                continue
            with self._guard:
                if self._closed:
                    connection.close()
                    return
                self._open.add(connection)
            name = "restconf-gateway-connection"
            threading.Thread(target=self._serve, args=(connection,), name=name, daemon=True).start()

    def _handshake(self, connection: Connection) -> bool:
        """Whether the peer answers the challenge, and proves us, within HANDSHAKE_S."""
        peer = socket.socket(fileno=os.dup(connection.fileno()))
        try:
            peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(HANDSHAKE_S))
            try:
                deliver_challenge(connection, self.authkey)
                answer_challenge(connection, self.authkey)
            except (AuthenticationError, EOFError, OSError):
                LOG.warning("a connection to the RESTCONF worker gateway failed its challenge")
                return False
            peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(0))
            return True
        finally:
            peer.close()
            self._handshakes.release()

    def _serve(self, connection: Connection) -> None:
        try:
            if not self._handshake(connection):
                return
            while True:
                try:
                    message = connection.recv()
                except (EOFError, OSError):
                    return
                if isinstance(message, Ready):
                    self._on_ready(message.pid)
                    connection.send(Answer(None, None))
                elif isinstance(message, Validated):
                    VALIDATED.inc()
                    connection.send(self._run(message))
                elif isinstance(message, Forwarded):
                    (CHECKED if message.authenticate_only else FORWARDED).inc()
                    self._forward(connection, message)
                else:
                    LOG.error("a RESTCONF worker sent %s", type(message).__name__)
                    return
        except (EOFError, OSError):
            return
        finally:
            with self._guard:
                self._open.discard(connection)
            connection.close()

    def _forward(self, connection: Connection, message: Forwarded) -> None:
        """Answer a request as the WSGI application would; a stream's chunks follow its
        head until it ends or the worker closes the connection (its client is gone)."""
        started = time.perf_counter()
        memo = _memo(message.credential)
        reply = self._answered(message, memo)
        if reply is None:
            connection.send(Answer(None, memo.credential))
            return
        self._app.count(message.request, reply.status, started)
        if reply.stream is None:
            connection.send(Answer(reply, memo.credential))
            return
        chunks = iter(reply.stream)
        try:
            connection.send(StreamHead(reply.status, reply.headers, memo.credential))
            for chunk in chunks:
                if chunk:
                    connection.send(chunk)
            connection.send(None)
        finally:
            close = getattr(chunks, "close", None)
            if callable(close):
                close()

    def _answered(self, message: Forwarded, memo: ConnectionMemo) -> HttpReply | None:
        """The reply to a forwarded request; None for good credentials (authenticate_only)."""
        bare = message.request
        try:
            user = None
            if not is_public(bare):
                authenticated = self._app.authenticate(bare, message.source, memo)
                if authenticated.user is None:
                    return self._app.refused(bare, authenticated)
                user = authenticated.user
            if message.authenticate_only:
                return None
            return self._app.respond(bare, bare.body, message.source, user)
        except Exception:  # the handlers never raise; authentication might
            LOG.exception("unexpected error on %s %s", bare.method, bare.path)
            return self._app.failed(bare)

    def _run(self, message: Validated) -> Reply:
        """Run a validated invocation: credentials, access control, the handler."""
        started = time.perf_counter()
        bare = message.request
        memo = _memo(message.credential)
        try:
            authenticated = self._app.authenticate(bare, message.source, memo)
            if authenticated.user is None:
                reply = self._app.refused(bare, authenticated)
                self._app.count(bare, reply.status, started)
                return Answer(reply, memo.credential)
            principal = self._app.principal(authenticated.user, message.source)
            with self._app.context(bare, message.source) as problem:
                if problem is not None:
                    self._app.count(bare, problem.status, started)
                    return Answer(problem, memo.credential)
                output = self._core.run_validated(message.path, message.members, principal)
        except CatsError as exc:
            self._app.count(bare, status_of(exc.items), started)
            return Failed(exc.items, memo.credential)
        except Exception:
            LOG.exception("unexpected error on %s %s", bare.method, bare.path)
            item = ErrorItem(ErrorType.APPLICATION, "operation-failed", "internal error")
            self._app.count(bare, 500, started)
            return Failed((item,), memo.credential)
        self._app.count(bare, 200, started)
        return Output(output, memo.credential)


def _timeval(seconds: float) -> bytes:
    """A ``struct timeval`` for SO_RCVTIMEO (0: no timeout)."""
    return struct.pack("ll", int(seconds), int(seconds % 1 * 1_000_000))


def _memo(credential: bytes | None) -> ConnectionMemo:
    memo = ConnectionMemo()
    memo.credential = credential
    return memo


def without_body(request: HttpRequest) -> HttpRequest:
    """A request as a validated invocation carries it (its input travels as members)."""
    return HttpRequest(request.method, request.path, request.query, request.headers)
