"""The production WSGI server: cheroot (CherryPy's threaded server), HTTPS when configured."""

from __future__ import annotations

import logging
import select
import ssl
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from cheroot import wsgi
from cheroot.ssl.builtin import BuiltinSSLAdapter

LOG = logging.getLogger(__name__)
DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_THREADS = 32
DEFAULT_MAX_BODY = 16 * 1024 * 1024
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

    @property
    def scheme(self) -> str:
        """``https`` when a certificate is configured."""
        return "https" if self.tls is not None else "http"

    @property
    def base_url(self) -> str:
        """The RESTCONF root URL (RFC 8040 3.1); ``http://127.0.0.1:8080/restconf`` by default."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{self.port}/restconf"


def _ssl_adapter(tls: TlsSettings) -> BuiltinSSLAdapter:
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


class KeepAliveServer(wsgi.Server):
    """cheroot's WSGI server, where a worker that has answered on a keep-alive connection
    waits up to KEEP_ALIVE_WAIT_MS for the client's next request before handing the
    connection back to the selector thread: a client that sends its requests back to back
    skips the selector's wake-up and one thread hand-off per request."""

    def put_conn(self, conn: Any) -> None:
        """Serve the connection's next request now if it comes at once, else park it."""
        if (
            self.ready
            and not conn.rfile.has_data()
            and _readable_soon(conn.socket, KEEP_ALIVE_WAIT_MS)
        ):
            self.process_conn(conn)
            return
        super().put_conn(conn)


class RestconfServer:
    """A running cheroot server for a WSGI app; ``with`` starts it and stops it."""

    def __init__(self, app: Any, settings: ListenSettings) -> None:
        self._settings = settings
        self._server = KeepAliveServer(
            (settings.address, settings.port),
            app,
            numthreads=settings.threads,
            server_name="cats-controller",
        )
        if settings.tls is not None:
            self._server.ssl_adapter = _ssl_adapter(settings.tls)
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
        """Bind and serve in a background thread."""
        self._server.prepare()
        self._thread = threading.Thread(target=self._server.serve, name="restconf", daemon=True)
        self._thread.start()
        LOG.info("RESTCONF listening at %s", self._settings.base_url)

    def stop(self) -> None:
        """Stop serving and wait for the worker threads."""
        self._server.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
