"""What the agents' ``catsctl`` sub-commands share: argument types, the flags of an agent's
login at the C-PS, and how a serving agent runs until it is signalled.

Light on purpose: ``catsctl`` imports every agent's command line at start, so the heavier
modules are imported only when a command runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.common.runner import Signals

_MAX_PORT = 65535


def listen_address(text: str) -> tuple[str, int]:
    """``ADDR:PORT`` (``[IPv6]:PORT``) of a listener, as an argparse type."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= _MAX_PORT:
        raise argparse.ArgumentTypeError(f"expected ADDR:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def add_login_arguments(parser: argparse.ArgumentParser, agent: str) -> None:
    """``--cps-url``, ``--username`` and ``--password-file``: where the C-PS is and who
    ``agent`` (as named in the help, ``C-NMA``) is to it."""
    parser.add_argument("--cps-url", metavar="URL", help="RESTCONF root of the C-PS")
    parser.add_argument("--username", metavar="USER", help=f"the {agent}'s user at the C-PS")
    parser.add_argument(
        "--password-file", type=Path, metavar="FILE", help=f"first line: the {agent}'s password"
    )


def password_flag(path: Path | None) -> str | None:
    """The password of ``--password-file`` when it was given.

    Raises:
        ConfigError: the file cannot be read or is empty.
    """
    from agents.common.cps import read_password  # noqa: PLC0415 - light start-up

    return None if path is None else read_password(path, "--password-file")


def start_operations(args: argparse.Namespace, command: str) -> None:
    """Configure logging (``--log-format``, ``--log-level``, ``--verbose``) and start the
    management listener (``--metrics-address``: /metrics, /healthz, /readyz), which lives
    as long as the process. An agent is ready once it serves (:mod:`agents.common.readiness`).

    Raises:
        OSError: the ``--metrics-address`` given cannot be listened on.
        ValueError: a ``--log-level`` that names no level.
    """
    from agents.common.readiness import track  # noqa: PLC0415
    from controller.observability.listener import Readiness, start_management  # noqa: PLC0415
    from controller.observability.logs import configure  # noqa: PLC0415

    configure(verbose=args.verbose, log_format=args.log_format, levels=args.log_level)
    readiness = Readiness()
    track(readiness)  # ready once the agent serves (agents.common.readiness)
    start_management(args.metrics_address, command, readiness)


def run_until_signalled(command: str, run: Callable[[Signals], int]) -> int:
    """``run`` with SIGTERM and SIGINT (stop) and SIGHUP (reload) handled; an ``OSError`` it
    raises (a port in use, an unwritable state directory) is one line on stderr, status 1."""
    from agents.common.runner import Signals, install_handlers  # noqa: PLC0415

    signals = Signals()
    install_handlers(signals)
    try:
        return run(signals)
    except OSError as exc:
        print(f"catsctl {command}: {exc}", file=sys.stderr)
        return 1
