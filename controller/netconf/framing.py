"""RFC 6242 framing: end-of-message (base:1.0, 4.3) and chunked (base:1.1, 4.2).

:func:`frame` encodes one message; :class:`Deframer` is fed the bytes as they arrive and
returns the complete messages, enforcing a bound on a message's size. Both are pure: no I/O.
"""

from __future__ import annotations

import re

from controller.errors import ErrorItem, ErrorType
from controller.netconf.errors import FramingError

EOM = b"]]>]]>"
END_OF_CHUNKS = b"\n##\n"
MAX_CHUNK = 4294967295
_CHUNK_HEADER = re.compile(rb"\n#([1-9][0-9]{0,9})\n")
_HEADER_MAX = 13  # "\n#" + 10 digits + "\n"


def frame(message: bytes, *, chunked: bool) -> bytes:
    """One message as it goes on the wire."""
    if not chunked:
        return message + EOM
    return b"\n#%d\n" % len(message) + message + END_OF_CHUNKS


def _error(tag: str, message: str) -> FramingError:
    return FramingError(ErrorItem(ErrorType.TRANSPORT, tag, message))


class Deframer:
    """Splits a byte stream into messages; starts in end-of-message framing (for the hello)."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.chunked = False
        self._buffer = bytearray()
        self._scanned = 0  # EOM: where the delimiter search resumes
        self._message = bytearray()  # chunked: the chunks of the message so far
        self._remaining = 0  # chunked: bytes left of the current chunk

    def use_chunked(self) -> None:
        """Switch to chunked framing (after both hellos named base:1.1, RFC 6242 4.1)."""
        self.chunked = True

    def feed(self, data: bytes) -> None:
        """Add received bytes (take the messages with :meth:`next_message`)."""
        self._buffer += data

    def next_message(self) -> bytes | None:
        """The next complete message, or None until more bytes arrive.

        One message at a time, so that the caller can switch framing right after the hello.

        Raises:
            FramingError: ``malformed-message`` for a broken chunk header, ``too-big`` for a
                message over the bound. The stream cannot be resynchronised after either.
        """
        return self._next_chunked() if self.chunked else self._next_eom()

    def _next_eom(self) -> bytes | None:
        index = self._buffer.find(EOM, max(0, self._scanned - len(EOM) + 1))
        if index < 0:
            self._scanned = len(self._buffer)
            if len(self._buffer) > self.max_size + len(EOM):
                raise _error("too-big", f"a message exceeds {self.max_size} bytes")
            return None
        if index > self.max_size:
            raise _error("too-big", f"a message exceeds {self.max_size} bytes")
        message = bytes(self._buffer[:index])
        del self._buffer[: index + len(EOM)]
        self._scanned = 0
        return message

    def _next_chunked(self) -> bytes | None:
        while True:
            if self._remaining:
                take = min(self._remaining, len(self._buffer))
                if not take:
                    return None
                self._message += self._buffer[:take]
                del self._buffer[:take]
                self._remaining -= take
                if len(self._message) > self.max_size:
                    raise _error("too-big", f"a message exceeds {self.max_size} bytes")
                continue
            if len(self._buffer) < len(END_OF_CHUNKS):
                return None
            if self._buffer.startswith(END_OF_CHUNKS):
                del self._buffer[: len(END_OF_CHUNKS)]
                if not self._message:
                    raise _error("malformed-message", "end of chunks before any chunk")
                message = bytes(self._message)
                self._message = bytearray()
                return message
            if not self._header():
                return None

    def _header(self) -> bool:
        """Consume one chunk header; False when more bytes are needed."""
        if not self._buffer.startswith(b"\n#"):
            raise _error("malformed-message", "expected a chunk header")
        newline = self._buffer.find(b"\n", 2)
        if newline < 0:
            if len(self._buffer) >= _HEADER_MAX:
                raise _error("malformed-message", "chunk header too long")
            return False
        match = _CHUNK_HEADER.match(self._buffer)
        if match is None or int(match.group(1)) > MAX_CHUNK:
            raise _error("malformed-message", "malformed chunk header")
        self._remaining = int(match.group(1))
        del self._buffer[: match.end()]
        return True
