"""``catsctl sci``: run one Service Contact Instance (sci-implementation)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from agents.common.http import parse_listen
from controller.commandline import DefaultsShown, add_operations_arguments

if TYPE_CHECKING:
    from agents.sci.sender import Credentials


def _listen(text: str) -> tuple[str, int]:
    try:
        return parse_listen(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _credentials(args: argparse.Namespace) -> Credentials | None:
    from agents.sci.errors import refused  # noqa: PLC0415
    from agents.sci.sender import Credentials, read_password  # noqa: PLC0415

    if args.username is None:
        return None
    password = args.password
    if args.password_file is not None:
        try:
            password = read_password(args.password_file)
        except OSError as exc:
            raise refused(f"cannot read the password file: {exc}", tag="operation-failed") from exc
    return Credentials(args.username, password or "")


def _cmd_sci(args: argparse.Namespace) -> int:
    """Run the SCI (imports the heavy parts only now, to keep ``catsctl`` start-up light)."""
    from agents.common.cli import start_operations  # noqa: PLC0415
    from agents.sci.agent import SciSettings, run_sci  # noqa: PLC0415
    from agents.sci.config import Overrides  # noqa: PLC0415
    from agents.sci.dispatcher import ForwardSettings  # noqa: PLC0415

    start_operations(args, "sci")
    settings = SciSettings(
        config=args.config,
        state_dir=args.state_dir,
        overrides=Overrides(listen=args.listen, c_sma_url=args.c_sma_url),
        credentials=_credentials(args),
        manage=args.manage,
        threads=args.threads,
        forward=ForwardSettings(read_timeout_s=args.forward_timeout_ms / 1000),
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        return run_sci(settings, stop)
    except OSError as exc:  # a port in use, an unwritable state directory
        print(f"catsctl sci: {exc}", file=sys.stderr)
        return 1


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sci`` to ``catsctl``'s sub-commands."""
    sci = commands.add_parser(
        "sci",
        allow_abbrev=False,  # --forward-timeout (seconds, before) must not pass as ...-ms
        formatter_class=DefaultsShown,
        help="run a CATS Service Contact Instance (dispatch, health, metrics, reports to a C-SMA)",
    )
    sci.add_argument(
        "--config",
        type=Path,
        required=True,
        metavar="FILE",
        help="the ietf-cats-sci:sci container as RFC 7951 JSON (validated; refused if malformed)",
    )
    sci.add_argument("--state-dir", type=Path, default=Path("state-sci"), metavar="DIR")
    sci.add_argument(
        "--c-sma-url", metavar="URL", help="RESTCONF root of the C-SMA (replaces c-sma)"
    )
    sci.add_argument("--username", metavar="NAME", help="basic-auth user at the C-SMA")
    secret = sci.add_mutually_exclusive_group()
    secret.add_argument("--password", metavar="PASSWORD")
    secret.add_argument("--password-file", type=Path, metavar="FILE")
    sci.add_argument(
        "--listen",
        type=_listen,
        metavar="ADDR:PORT",
        help="client-facing interface (replaces client-interface; a locator CSCI-ID follows)",
    )
    sci.add_argument(
        "--manage",
        type=_listen,
        default=("127.0.0.1", 0),
        metavar="ADDR:PORT",
        help="management interface: POST /push/SI-ID, GET /state, GET /notifications",
    )
    sci.add_argument("--threads", type=int, default=32, metavar="N")
    sci.add_argument(
        "--forward-timeout-ms",
        type=int,
        default=30_000,
        metavar="MS",
        help="read timeout of a forwarded request, in milliseconds",
    )
    add_operations_arguments(sci, "sci")
    sci.set_defaults(handler=_cmd_sci)
