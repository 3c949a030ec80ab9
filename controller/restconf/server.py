"""The production WSGI server: cheroot (CherryPy's threaded server), HTTPS when configured."""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import ssl
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from cheroot import wsgi
from cheroot.ssl.builtin import BuiltinSSLAdapter

from controller.errors import listen_error
from controller.model.limits import DocumentLimits
from controller.restconf.auth import ConnectionMemo
from controller.restconf.bounds import DEFAULT_ADDRESS, DEFAULT_MAX_BODY, DEFAULT_PORT, GateSettings
from controller.restconf.gate import Gate
from controller.restconf.wsgi import CONNECTION_MEMO, DETACH

LOG = logging.getLogger(__name__)
DEFAULT_THREADS = 32
KEEP_ALIVE_WAIT_MS = 1


@dataclass(frozen=True, slots=True)
class TlsSettings:
    """Server certificate and key; with ``client_ca``, clients must present a certificate."""

    cert: Path
    key: Path
    client_ca: Path | None = None


@dataclass(frozen=True, slots=True)
class ListenSettings:
    """Where and how RESTCONF listens."""

    address: str = DEFAULT_ADDRESS
    port: int = DEFAULT_PORT
    tls: TlsSettings | None = None
    threads: int = DEFAULT_THREADS
    max_body_size: int = DEFAULT_MAX_BODY
    gate: GateSettings = field(default_factory=GateSettings)
    limits: DocumentLimits = field(default_factory=DocumentLimits)  # the shape of a body
    workers: int = 0  # worker processes reading requests (controller.workers); 0: none

    @property
    def scheme(self) -> str:
        """``https`` when a certificate is configured."""
        return "https" if self.tls is not None else "http"

    @property
    def base_url(self) -> str:
        """The RESTCONF root URL (RFC 8040 3.1); ``http://127.0.0.1:8080/restconf`` by default."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{self.port}/restconf"


def ssl_adapter(tls: TlsSettings) -> BuiltinSSLAdapter:
    """cheroot's TLS for the configured certificate (and client CA)."""
    adapter = BuiltinSSLAdapter(str(tls.cert), str(tls.key))
    if tls.client_ca is not None:
        adapter.context.load_verify_locations(cafile=str(tls.client_ca))
        adapter.context.verify_mode = ssl.CERT_REQUIRED
    return adapter


def _readable_soon(sock: Any, milliseconds: int) -> bool:
    """Whether a socket has data (or its end) to read within ``milliseconds``; the GIL is
    left meanwhile. False for a socket that is no longer usable."""
    try:
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(milliseconds))
    except (OSError, ValueError):
        return False


class ConnectionGateway(wsgi.Gateway_10):
    """cheroot's WSGI 1.0 gateway, adding what the application needs of the connection:
    its :class:`ConnectionMemo` and a way to take a response stream off the worker."""

    def get_environ(self) -> dict[str, Any]:  # type: ignore[override]
        """The environ, with the connection's memo and the stream hand-off."""
        environ: dict[str, Any] = super().get_environ()  # type: ignore[no-untyped-call]
        conn = self.req.conn
        memo = getattr(conn, "cats_memo", None)
        if memo is None:
            memo = conn.cats_memo = ConnectionMemo()
        environ[CONNECTION_MEMO] = memo
        environ[DETACH] = self.detach
        return environ

    def start_response(
        self, status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Any:
        """cheroot's, honouring the application's ``Connection: close``: the connection
        ends after the response, and cheroot does not first read what is left of the body
        (a body that did not arrive by its deadline, or one too large)."""
        write = super().start_response(status, headers, exc_info)
        if any(k.lower() == "connection" and v.lower() == "close" for k, v in headers):
            self.req.close_connection = True
        return write

    def detach(self, stream: Iterable[bytes]) -> None:
        """Send the response head now and give the connection to a thread of its own that
        writes ``stream`` to its end, so that no worker waits on an event stream."""
        req = self.req
        conn = req.conn
        fields = b"".join(key + b": " + value + b"\r\n" for key, value in req.outheaders)
        conn.wfile.write(b"HTTP/1.1 " + req.status + b"\r\n" + fields + STREAMED)
        conn.wfile.flush()
        req.sent_headers = True
        req.close_connection = True
        conn.linger = True  # the worker's close leaves the socket to the stream's thread
        threading.Thread(
            target=_write_stream, args=(conn.socket, stream), name="restconf-stream", daemon=True
        ).start()


#: A stream's body is chunked (so that a client reads each event as it comes) and its
#: connection ends with it.
STREAMED = b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
STREAM_SEND_TIMEOUT_S = 30.0


def _write_stream(sock: Any, stream: Iterable[bytes]) -> None:
    """Write an event stream until it ends or the client is gone (a send that stalls for
    STREAM_SEND_TIMEOUT_S counts as gone); then close the subscription and the socket."""
    chunks = iter(stream)
    try:
        sock.settimeout(STREAM_SEND_TIMEOUT_S)
        for chunk in chunks:
            if chunk:
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        sock.sendall(b"0\r\n\r\n")
    except (OSError, ValueError):
        pass
    finally:
        close = getattr(chunks, "close", None)
        if callable(close):
            close()
        with contextlib.suppress(OSError, ValueError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError, ValueError):
            sock.close()


class GatedServer(wsgi.Server):
    """cheroot's WSGI server with the :class:`~controller.restconf.gate.Gate` in place of its
    connection manager, the :class:`ConnectionGateway`, and a keep-alive shortcut: a worker
    that has answered waits up to KEEP_ALIVE_WAIT_MS for the client's next request and hands
    it straight on when its head is all there, skipping the selector's wake-up."""

    def __init__(self, bind: tuple[str, int], app: Any, settings: ListenSettings) -> None:
        super().__init__(bind, app, numthreads=settings.threads, server_name="cats-controller")
        self.gateway = ConnectionGateway
        self._gate_settings = settings.gate

    def prepare(self) -> None:
        """Bind, then put the gate in place of cheroot's connection manager."""
        super().prepare()
        replaced: Any = self._connections
        self._connections: Any = Gate(self, self._gate_settings)
        replaced._selector.close()

    def put_conn(self, conn: Any) -> None:
        """Wait a moment for the connection's next request, then let the gate take it."""
        if self.ready and not conn.rfile.has_data():
            _readable_soon(conn.socket, KEEP_ALIVE_WAIT_MS)
        super().put_conn(conn)


class RestconfServer:
    """A running cheroot server for a WSGI app; ``with`` starts it and stops it."""

    def __init__(self, app: Any, settings: ListenSettings) -> None:
        self._settings = settings
        self._server = GatedServer((settings.address, settings.port), app, settings)
        if settings.tls is not None:
            self._server.ssl_adapter = ssl_adapter(settings.tls)
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RestconfServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Bind and serve in a background thread.

        Raises:
            CatsError: the address cannot be bound (a port taken), in one line.
        """
        try:
            self._server.prepare()
        except OSError as exc:
            address, port = self._settings.address, self._settings.port
            raise listen_error("RESTCONF", address, port, exc, "--restconf-port") from None
        self._thread = threading.Thread(target=self._server.serve, name="restconf", daemon=True)
        self._thread.start()
        LOG.info("RESTCONF listening at %s", self._settings.base_url)

    def stop(self) -> None:
        """Stop serving and wait for the worker threads."""
        self._server.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
