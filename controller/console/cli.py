"""``catsctl console`` on the command line (light: Flask and cheroot load when it runs)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from controller.commandline import DefaultsShown

LOG = logging.getLogger("catsctl.console")
DEFAULT_LISTEN = "127.0.0.1:8088"
DEFAULT_CPS = "http://127.0.0.1:8080/restconf"
DEFAULT_THREADS = 48


def _listen(text: str) -> tuple[str, int]:
    address, _, port = text.rpartition(":")
    if not address or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected ADDR:PORT, got {text!r}")
    return address.strip("[]"), int(port)


def _cmd_console(args: argparse.Namespace) -> int:
    from controller.console.serve import ConsoleServer, ListenSettings  # noqa: PLC0415
    from controller.console.settings import ConsoleSettings  # noqa: PLC0415
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
