"""``catsctl console``: the operator console on cheroot, a threaded production WSGI server.

Each open live page holds a worker thread for its event stream, so the pool is sized for
that (``--threads``). HTTPS with ``--tls-cert`` and ``--tls-key`` (the session cookie is then
``Secure``); an HTTPS C-PS is verified against ``--cps-ca`` (or the system's CAs).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from cheroot import wsgi
from cheroot.ssl.builtin import BuiltinSSLAdapter

from controller.commandline import DefaultsShown
from controller.console.app import create_app
from controller.console.settings import ConsoleSettings

LOG = logging.getLogger("catsctl.console")
DEFAULT_LISTEN = "127.0.0.1:8088"
DEFAULT_CPS = "http://127.0.0.1:8080/restconf"
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


def _listen(text: str) -> tuple[str, int]:
    address, _, port = text.rpartition(":")
    if not address or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected ADDR:PORT, got {text!r}")
    return address.strip("[]"), int(port)


def _cmd_console(args: argparse.Namespace) -> int:
    from controller.observability.logs import configure  # noqa: PLC0415

    configure(verbose=args.verbose, log_format=args.log_format, levels=args.log_level)
    if bool(args.tls_cert) != bool(args.tls_key):
        print("catsctl console: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    address, port = args.listen
    listen = ListenSettings(address, port, args.tls_cert, args.tls_key, args.threads)
    verify: bool | str = str(args.cps_ca) if args.cps_ca else True
    settings = ConsoleSettings(
        args.cps_url,
        verify=verify,
        idle_timeout=args.idle_timeout,
        plot_window=args.plot_window,
        secure_cookie=args.tls_cert is not None,
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with ConsoleServer(settings, listen) as server:
        shown = ListenSettings(address, server.port, args.tls_cert, args.tls_key)
        LOG.info("console: serving %s for the C-PS at %s", shown.url, args.cps_url)
        stop.wait()
    LOG.info("console: stopped")
    return 0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``console``."""
    console = commands.add_parser(
        "console",
        help="the operator's web console, a client of the C-PS's RESTCONF",
        description="Serve the operator console: log in with your C-PS user; every page "
        "reads and acts over the C-PS's RESTCONF as that user (its access rules apply).",
        formatter_class=DefaultsShown,
    )
    console.add_argument(
        "--listen",
        type=_listen,
        default=_listen(DEFAULT_LISTEN),
        metavar="ADDR:PORT",
        help=f"where the console listens (default: {DEFAULT_LISTEN})",
    )
    console.add_argument(
        "--cps-url", default=DEFAULT_CPS, metavar="URL", help="the C-PS's RESTCONF root"
    )
    console.add_argument(
        "--cps-ca", type=Path, metavar="PEM", help="CA bundle to verify an HTTPS C-PS"
    )
    console.add_argument("--tls-cert", type=Path, metavar="PEM", help="serve HTTPS")
    console.add_argument("--tls-key", type=Path, metavar="PEM", help="the key of --tls-cert")
    console.add_argument(
        "--idle-timeout",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="a session ends after this long without a request",
    )
    console.add_argument(
        "--plot-window",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how far back the plots go (the C-PS's replay log bounds it)",
    )
    console.add_argument(
        "--threads",
        type=int,
        default=DEFAULT_THREADS,
        metavar="N",
        help="worker threads (each open live page holds one)",
    )
    console.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="one line per event"
    )
    console.add_argument(
        "--log-level",
        action="append",
        default=[],
        metavar="[COMPONENT=]LEVEL",
        help="a logger's level (repeatable)",
    )
    console.add_argument("-v", "--verbose", action="store_true", help="DEBUG")
    console.set_defaults(handler=_cmd_console)
