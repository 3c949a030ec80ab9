"""The agents' HTTP plumbing: a threaded production server (cheroot) for a WSGI callable, owned
with ``with``, and the few WSGI helpers the SCI, the forwarder and the service instance share.

:class:`HttpServer` serves the SCI's client-facing and management interfaces, the forwarder's
data plane and the test service instance. :func:`client_headers` is what a proxying agent (the
SCI's Dispatcher, the forwarder) passes on of a client's request: the end-to-end headers
(RFC 9110 7.6.1: hop-by-hop ones are not forwarded) and ``X-Forwarded-For``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from cheroot import wsgi

LOG = logging.getLogger(__name__)
StartResponse = Callable[..., Any]
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def parse_listen(text: str) -> tuple[str, int]:
    """``ADDRESS:PORT`` or ``[IPv6]:PORT`` as a pair.

    Raises:
        ValueError: when there is no port.
    """
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected ADDRESS:PORT, got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


class HttpServer:
    """cheroot serving one WSGI app on a thread pool; ``with`` starts and stops it."""

    def __init__(self, app: WsgiApp, address: str, port: int, *, name: str, threads: int) -> None:
        self.name = name
        self._server = wsgi.Server((address, port), app, numthreads=threads, server_name=name)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (useful when 0 was asked)."""
        bound: Any = self._server.bind_addr
        return int(bound[1])

    def __enter__(self) -> HttpServer:
        self._server.prepare()
        self._thread = threading.Thread(target=self._server.serve, name=self.name, daemon=True)
        self._thread.start()
        LOG.info("%s listening on %s", self.name, self._server.bind_addr)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)


def respond(
    start_response: StartResponse,
    status: str,
    body: bytes,
    content_type: str = "application/json",
    headers: Iterable[tuple[str, str]] = (),
) -> list[bytes]:
    """Start a response with a body and its length."""
    start_response(
        status,
        [("Content-Type", content_type), ("Content-Length", str(len(body))), *headers],
    )
    return [body]


def read_body(environ: dict[str, Any], limit: int) -> bytes:
    """The request body, at most ``limit`` bytes.

    Raises:
        ValueError: when the body is larger than ``limit``.
    """
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if length > limit:
        raise ValueError(f"request body of {length} bytes exceeds {limit}")
    data: bytes = environ["wsgi.input"].read(length) if length else b""
    return data


def client_headers(environ: dict[str, Any]) -> dict[str, str]:
    """The request headers to pass on to the instance."""
    headers = {
        key[5:].replace("_", "-").title(): value
        for key, value in environ.items()
        if key.startswith("HTTP_") and key[5:].replace("_", "-").lower() not in HOP_BY_HOP
    }
    if environ.get("CONTENT_TYPE"):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    headers["X-Forwarded-For"] = environ.get("REMOTE_ADDR", "")
    return headers
