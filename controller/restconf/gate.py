"""The connection gate of the RESTCONF server: no worker waits for a slow or idle client.

cheroot hands a connection to a worker thread as soon as it is readable (a fresh one at
once, before a byte), and does a TLS handshake on its one acceptor thread; so a few idle or
trickling clients hold every worker, and one that never starts TLS holds the acceptor. The
gate replaces cheroot's connection manager (its selector loop) so that the selector thread
does all the waiting, without blocking:

* the TLS handshake runs non-blocking in the selector loop (``do_handshake`` on readiness);
* the request head (request line and header fields) is read there, non-blocking, into the
  connection's buffer, and so is a body that fits in it: a worker gets the connection only
  when a whole head (and such a body) is there to parse;
* a connection gets ``header_timeout`` seconds from its first byte (from its accept when
  new) to complete a head, and an idle keep-alive one ``idle_timeout``; then it is closed;
* a body larger than the buffer is read by the worker within ``body_timeout`` seconds in
  all (a total, not a per-read, deadline: :class:`DeadlineReader`), else 408.

At most ``max_connections`` connections wait in the gate, and ``max_per_source`` from one
address (as OpenSSH's ``PerSourceMaxStartups``): a further one is closed at accept, so one
client cannot fill the gate and keep everyone else out.
"""

from __future__ import annotations

import _pyio  # cheroot's reader is the pure-Python io's, which the gate's extends
import contextlib
import re
import selectors
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any

from cheroot import connections
from cheroot.makefile import StreamWriter

from controller.restconf.bounds import GateSettings

HEAD_END = b"\r\n\r\n"
SELECT_S = 0.25
_LENGTH = re.compile(rb"\r\ncontent-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r\n", re.IGNORECASE)


BUFFER_SIZE = 64 * 1024  # the largest head (with a small body) read in the gate
_CHUNK = 16 * 1024


class DeadlineSocketIO(socket.SocketIO):
    """A socket's raw reader with an optional total deadline (``time.monotonic``)."""

    deadline: float | None = None
    patience: float = 10.0  # the per-read timeout of a blocking read (cheroot's timeout)

    def __init__(self, sock: Any) -> None:
        super().__init__(sock, "rb")
        self.sock = sock

    def readinto(self, buffer: Any) -> int | None:
        """Read; a blocking read waits at most until the deadline."""
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out")  # cheroot answers 408 to 'timed out'
            self.sock.settimeout(min(left, self.patience))
        return super().readinto(buffer)


class DeadlineReader(_pyio.BufferedReader):  # type: ignore[misc]
    """cheroot's ``StreamReader`` (``has_data``, ``bytes_read``) over a DeadlineSocketIO,
    which the gate can also fill without blocking (:meth:`fill`)."""

    _read_buf: bytes
    _read_pos: int

    def __init__(self, sock: Any, mode: str = "rb", bufsize: int = BUFFER_SIZE) -> None:
        del mode  # always binary reading
        self.raw_io = DeadlineSocketIO(sock)
        super().__init__(self.raw_io, bufsize)
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        """Read, counting the bytes."""
        value: bytes = super().read(size)
        self.bytes_read += len(value)
        return value

    def has_data(self) -> bool:
        """Whether bytes are buffered."""
        return bool(len(self._read_buf) > self._read_pos)

    def fill(self) -> tuple[bytes, bool]:
        """Buffer what has arrived, without blocking (the socket is non-blocking), up to the
        buffer's size; the buffered bytes and whether the peer has ended."""
        with self._read_lock:
            ended = False
            while len(self._read_buf) - self._read_pos < self.buffer_size:
                room = self.buffer_size - (len(self._read_buf) - self._read_pos)
                chunk = bytearray(min(_CHUNK, room))
                try:
                    count = self.raw.readinto(chunk)
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                    break
                except (OSError, ValueError):
                    ended = True
                    break
                if count is None:
                    break
                if count == 0:
                    ended = True
                    break
                self._read_buf = bytes(self._read_buf[self._read_pos :]) + bytes(chunk[:count])
                self._read_pos = 0
            return bytes(self._read_buf[self._read_pos :]), ended


def makefile(sock: Any, mode: str = "r", bufsize: int = BUFFER_SIZE) -> Any:
    """The connection's reader (with a deadline) or writer."""
    if "r" in mode:
        return DeadlineReader(sock, mode, max(bufsize, BUFFER_SIZE))
    return StreamWriter(sock, mode, bufsize)


def head_complete(buffered: bytes) -> bool:
    """Whether the buffered bytes hold a whole request head (leading empty lines skipped)."""
    return HEAD_END in buffered.lstrip(b"\r\n")


def body_awaited(buffered: bytes) -> bool:
    """Whether the gate should wait for more of a body: a declared length whose body fits in
    the buffer but is not all there yet. A chunked body, or one too large for the buffer, is
    read by the worker, within the body deadline."""
    stripped = buffered.lstrip(b"\r\n")
    end = stripped.find(HEAD_END) + len(HEAD_END)
    head = stripped[: end - 2]
    found = _LENGTH.search(head)
    if found is None or b"\r\nexpect:" in head.lower():  # 100-continue: the worker answers
        return False
    length = int(found.group(1))
    return end + length <= BUFFER_SIZE and len(stripped) - end < length


class Gate(connections.ConnectionManager):
    """cheroot's connection manager, waiting for clients without any worker's help."""

    _selector: Any  # cheroot's thread-safe selector (its stub leaves it out)
    _stop_requested: bool
    _remove_invalid_sockets: Callable[[], None]

    def __init__(self, server: Any, settings: GateSettings) -> None:
        super().__init__(server)
        self.settings = settings

    # ---------------------------------------------------------------- cheroot's interface

    def put(self, conn: Any) -> None:
        """A worker is done with a keep-alive connection: wait for its next request."""
        conn.last_used = time.time()
        self._wait_for(conn, time.monotonic() + self.settings.idle_timeout, fresh=False)

    @property
    def can_add_keepalive_connection(self) -> bool:
        """Whether a response may keep its connection open."""
        return bool(self.waiting < self.settings.max_connections)

    def _from_server_socket(self, server_socket: Any) -> Any:
        """Accept one connection; never blocks on the client (TLS included)."""
        try:
            sock, address = server_socket.accept()
        except OSError:
            return None
        connections.prevent_socket_inheritance(sock)
        if self.waiting >= self.settings.max_connections or self._crowded(address[0]):
            sock.close()
            return None
        sock.setblocking(False)  # noqa: FBT003
        adapter = self.server.ssl_adapter
        handshaking = adapter is not None
        if handshaking:
            try:
                sock = adapter.context.wrap_socket(
                    sock, server_side=True, do_handshake_on_connect=False
                )
            except (OSError, ValueError):
                sock.close()
                return None
        conn = self.server.ConnectionClass(self.server, sock, makefile)
        conn.remote_addr, conn.remote_port = address[0], address[1]
        conn.ssl_env = {}
        conn.gate_handshaking = handshaking
        deadline = time.monotonic() + self.settings.header_timeout
        self._wait_for(conn, deadline, fresh=True)
        return None  # the gate hands it to a worker itself, once its head is in

    def _crowded(self, source: str) -> bool:
        """Whether ``source`` has its bound of connections waiting in the gate (counted on the
        selector itself, on the selector thread: nothing to keep in step)."""
        bound = self.settings.max_per_source
        found = 0
        for _, conn in self._selector.connections:
            if conn is not self.server and getattr(conn, "remote_addr", None) == source:
                found += 1
                if found >= bound:
                    return True
        return False

    @property
    def waiting(self) -> int:
        """Connections in the gate now (the listening socket is registered too)."""
        return len(self._selector) - 1

    def _run(self, expiration_interval: float) -> None:
        del expiration_interval
        while not self._stop_requested:
            try:
                ready = list(self._selector.select(timeout=SELECT_S))
            except OSError:
                self._remove_invalid_sockets()
                continue
            for fd, conn in ready:
                if conn is self.server:
                    self._from_server_socket(self.server.socket)
                    continue
                self._selector.unregister(fd)
                self._progress(conn)
            self._expire_deadlines(time.monotonic())

    # ---------------------------------------------------------------- the waiting

    def _wait_for(self, conn: Any, deadline: float, *, fresh: bool) -> None:
        conn.gate_deadline = deadline
        conn.gate_started = False
        conn.gate_fresh = fresh
        reader = conn.rfile
        if isinstance(reader, DeadlineReader):
            reader.raw_io.deadline = None
        with contextlib.suppress(OSError):
            conn.socket.setblocking(False)  # noqa: FBT003
        self._progress(conn)

    def _register(self, conn: Any, events: int = selectors.EVENT_READ) -> None:
        try:
            self._selector.register(conn.socket.fileno(), events, data=conn)
        except (OSError, ValueError, KeyError):
            self._close(conn)

    def _handshake(self, conn: Any) -> bool:
        """Advance a TLS handshake; True once it is done (False: waiting, or closed)."""
        try:
            conn.socket.do_handshake()
        except ssl.SSLWantReadError:
            self._register(conn)
            return False
        except ssl.SSLWantWriteError:
            self._register(conn, selectors.EVENT_WRITE)
            return False
        except (OSError, ValueError):
            self._close(conn)
            return False
        conn.gate_handshaking = False
        conn.ssl_env = self.server.ssl_adapter.get_environ(conn.socket)
        return True

    def _progress(self, conn: Any) -> None:
        """Advance a waiting connection: handshake, read, hand it over or close it."""
        if getattr(conn, "gate_handshaking", False) and not self._handshake(conn):
            return
        reader = conn.rfile
        if not isinstance(reader, DeadlineReader):  # not one of the gate's connections
            self._dispatch(conn)
            return
        buffered, ended = reader.fill()
        if buffered and not conn.gate_started:
            conn.gate_started = True
            conn.gate_deadline = min(
                conn.gate_deadline, time.monotonic() + self.settings.header_timeout
            )
        if head_complete(buffered) and (ended or not body_awaited(buffered)):
            self._dispatch(conn)
        elif not head_complete(buffered) and len(buffered) >= BUFFER_SIZE:
            self._refuse(conn, b"431 Request Header Fields Too Large")
        elif ended:
            self._close(conn)
        else:
            self._register(conn)

    def _dispatch(self, conn: Any) -> None:
        """Hand a connection with its head in to a worker, under the body deadline."""
        reader = conn.rfile
        if isinstance(reader, DeadlineReader):
            reader.raw_io.patience = float(self.server.timeout)
            reader.raw_io.deadline = time.monotonic() + self.settings.body_timeout
        try:
            conn.socket.settimeout(self.server.timeout)
        except OSError:
            self._close(conn)
            return
        self.server.process_conn(conn)

    def _refuse(self, conn: Any, status: bytes) -> None:
        with contextlib.suppress(OSError, ValueError):
            conn.socket.send(b"HTTP/1.1 " + status + b"\r\nConnection: close\r\n\r\n")
        self._close(conn)

    @staticmethod
    def _close(conn: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            conn.close()

    def _expire_deadlines(self, now: float) -> None:
        """Close the connections past their deadline (handshake, head or idle)."""
        late = [
            (fd, conn)
            for fd, conn in self._selector.connections
            if conn is not self.server and getattr(conn, "gate_deadline", now + 1) <= now
        ]
        for fd, conn in late:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(fd)
            if conn.gate_started and not conn.gate_handshaking:
                self._refuse(conn, b"408 Request Timeout")
            else:
                self._close(conn)
