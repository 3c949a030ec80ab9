"""``catsctl console``: the operator console on cheroot, a threaded production WSGI server.

Each open live page holds a worker thread for its event stream, so the pool is sized for
that (``--threads``). HTTPS with ``--tls-cert`` and ``--tls-key`` (the session cookie is then
``Secure``); an HTTPS C-PS is verified against ``--cps-ca`` (or the system's CAs).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from cheroot import wsgi
from cheroot.ssl.builtin import BuiltinSSLAdapter

from controller.console.app import create_app
from controller.console.settings import ConsoleSettings

LOG = logging.getLogger("catsctl.console")
DEFAULT_THREADS = 48


@dataclass(frozen=True, slots=True)
class ListenSettings:
    """Where the console listens, its TLS certificate and key, its worker threads."""

    address: str = "127.0.0.1"
    port: int = 8088
    cert: Path | None = None
    key: Path | None = None
    threads: int = DEFAULT_THREADS

    @property
    def url(self) -> str:
        """The console's address for a browser."""
        scheme = "https" if self.cert else "http"
        return f"{scheme}://{self.address}:{self.port}/"


class ConsoleServer:
    """A running console; ``with`` starts and stops it."""

    def __init__(self, settings: ConsoleSettings, listen: ListenSettings) -> None:
        self.listen = listen
        app: Any = create_app(settings)
        self._server = wsgi.Server(
            (listen.address, listen.port),
            app,
            numthreads=listen.threads,
            server_name="cats-console",
        )
        if listen.cert is not None and listen.key is not None:
            self._server.ssl_adapter = BuiltinSSLAdapter(str(listen.cert), str(listen.key))
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ConsoleServer:
        self._server.prepare()  # binds now: a port in use fails here, with OSError
        self._thread = threading.Thread(target=self._server.serve, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.stop()
        if self._thread is not None:
            self._thread.join(timeout=10)

    @property
    def port(self) -> int:
        """The bound port (the one asked for, or the one given for 0)."""
        bound: Any = self._server.bind_addr
        return int(bound[1])
