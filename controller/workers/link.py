"""What a RESTCONF worker process and the core say to each other, and the worker's end.

Each worker thread holds its own connection to the core (``multiprocessing.connection`` over
a Unix socket in a directory only the server's user may enter, opened with an HMAC challenge
on a key only the core and its workers know), so a request is one send and one receive, and
the core answers each connection on a thread of its own, as it would answer the HTTP
connection itself. The messages are named tuples, which pickle at C speed (a dataclass with
slots pickles through Python code).
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from multiprocessing.connection import Client, Connection
from typing import NamedTuple

from controller.errors import ErrorItem
from controller.restconf.http import HttpReply, HttpRequest
from controller.types import DataPath

FAMILY = "AF_UNIX"


class Forwarded(NamedTuple):
    """A request the core answers whole: its HTTP read, its body within its bounds. With
    ``authenticate_only``, the core only checks its credentials (the first request of a
    connection, before its body is read: 401 comes before 413, as in one process)."""

    request: HttpRequest
    source: str
    credential: bytes | None  # what the connection has proved (restconf.auth.ConnectionMemo)
    authenticate_only: bool = False


class Validated(NamedTuple):
    """An invocation of an RPC whose input the worker parsed and validated: the core checks
    the credentials and access, and runs the handler."""

    request: HttpRequest  # without its body
    source: str
    credential: bytes | None
    path: DataPath
    members: dict[str, object]


class Ready(NamedTuple):
    """A worker serves: its process id."""

    pid: int


class Answer(NamedTuple):
    """The reply to a request; ``reply`` None: the credentials are good (authenticate_only)."""

    reply: HttpReply | None
    credential: bytes | None


class StreamHead(NamedTuple):
    """A stream's reply (RFC 8040 6.3): its chunks follow on the connection, then None."""

    status: int
    headers: tuple[tuple[str, str], ...]
    credential: bytes | None


class Output(NamedTuple):
    """A validated invocation's output members, for the worker to validate and print."""

    output: dict[str, object]
    credential: bytes | None


class Failed(NamedTuple):
    """A validated invocation the core refused (access control) or whose handler failed."""

    items: tuple[ErrorItem, ...]
    credential: bytes | None


Reply = Answer | StreamHead | Output | Failed


class CoreGoneError(ConnectionError):
    """The core does not answer: it stopped, or the worker is being stopped."""


class CoreLink:
    """The worker's end: one connection to the core per thread, opened when first used."""

    def __init__(self, address: str, authkey: bytes) -> None:
        self._address = address
        self._authkey = authkey
        self._local = threading.local()

    def ask(self, message: Forwarded | Validated | Ready) -> Reply:
        """Send a message and return the core's reply."""
        reply, chunks = self.ask_streaming(message)
        if chunks is not None:  # not one of the messages that stream
            chunks.close()
            raise CoreGoneError("the core answered with a stream")
        return reply

    def ask_streaming(
        self, message: Forwarded | Validated | Ready
    ) -> tuple[Reply, Generator[bytes, None, None] | None]:
        """Send a message and return the core's reply and, after a :class:`StreamHead`, its
        chunks: the stream keeps the connection (the thread opens another for its next
        message) until it ends or the iterator is closed, which ends the core's subscription."""
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            try:
                connection = Client(self._address, family=FAMILY, authkey=self._authkey)
            except OSError as exc:
                raise CoreGoneError(str(exc)) from exc
        self._local.connection = None  # back once answered; a failed or streaming one is not
        try:
            connection.send(message)
            reply: Reply = connection.recv()
        except (EOFError, OSError) as exc:
            connection.close()
            raise CoreGoneError(str(exc) or "the core closed the connection") from exc
        if isinstance(reply, StreamHead):
            return reply, _chunks(connection)
        self._local.connection = connection
        return reply, None


def _chunks(connection: Connection) -> Generator[bytes, None, None]:
    """A stream's chunks as the core sends them, until None or the connection's end."""
    try:
        while True:
            chunk = connection.recv()
            if chunk is None:
                return
            yield chunk
    except (EOFError, OSError):
        return
    finally:
        connection.close()
