"""``catsctl csma``: run a C-SMA (service-metrics-op 6.1, 8; agent-selection-mapping 9.1)."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.csma.config import CsmaConfig


def _listen(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:  # noqa: PLR2004
        raise argparse.ArgumentTypeError(f"expected ADDR:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def _overrides(args: argparse.Namespace, config: CsmaConfig) -> CsmaConfig:
    from dataclasses import replace  # noqa: PLC0415

    from agents.common.cps import read_password  # noqa: PLC0415
    from agents.csma.config import with_overrides  # noqa: PLC0415

    password = None
    if args.password_file is not None:
        password = read_password(args.password_file, "--password-file")
    server = config.server
    if args.listen is not None:
        server = replace(server, address=args.listen[0], restconf_port=args.listen[1])
    if args.restconf_port is not None:
        server = replace(server, restconf_port=args.restconf_port)
    if args.netconf_port is not None:
        server = replace(server, netconf_port=args.netconf_port)
    return with_overrides(
        config,
        state_dir=args.state_dir,
        url=args.cps_url,
        username=args.username,
        password=password,
        heartbeat=args.heartbeat,
        server=server,
    )


def _load(args: argparse.Namespace) -> CsmaConfig:
    from agents.csma.config import load_config  # noqa: PLC0415

    return _overrides(args, load_config(args.config))


def _cmd_csma(args: argparse.Namespace) -> int:
    """Validate the configuration, then serve and report until SIGTERM or SIGINT."""
    from agents.common.logs import configure_logging  # noqa: PLC0415
    from agents.common.runner import Signals, install_handlers  # noqa: PLC0415
    from agents.csma.agent import run_csma  # noqa: PLC0415

    configure_logging(verbose=args.verbose)
    load = functools.partial(_load, args)
    config = load()  # a ConfigError here ends catsctl with the items (controller/cli.py)
    if args.check:
        print(f"{args.config}: valid C-SMA configuration ({config.name})", file=sys.stderr)
        return 0
    signals = Signals()
    install_handlers(signals)
    try:
        return run_csma(load, signals)
    except OSError as exc:  # a port in use, an unwritable state directory
        print(f"catsctl csma: {exc}", file=sys.stderr)
        return 1


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``csma`` sub-command to ``catsctl``."""
    csma = commands.add_parser(
        "csma",
        help="run a C-SMA: receive SCI reports, report the site to the C-PS, serve state",
        description=__doc__,
    )
    csma.add_argument(
        "--config", type=Path, required=True, metavar="FILE", help="TOML or JSON configuration"
    )
    csma.add_argument(
        "--state-dir", type=Path, metavar="DIR", help="server state and report sequence numbers"
    )
    csma.add_argument("--cps-url", metavar="URL", help="RESTCONF root of the C-PS")
    csma.add_argument("--username", metavar="USER", help="the C-SMA's user at the C-PS")
    csma.add_argument(
        "--password-file", type=Path, metavar="FILE", help="first line: the C-SMA's password"
    )
    csma.add_argument(
        "--listen", type=_listen, metavar="ADDR:PORT", help="RESTCONF address and port"
    )
    csma.add_argument("--restconf-port", type=int, metavar="PORT")
    csma.add_argument("--netconf-port", type=int, metavar="PORT", help="0 turns NETCONF off")
    csma.add_argument(
        "--heartbeat", type=float, metavar="SECONDS", help="interval of the heartbeat reports"
    )
    csma.add_argument("--check", action="store_true", help="validate the configuration and exit")
    csma.add_argument("-v", "--verbose", action="store_true")
    csma.set_defaults(handler=_cmd_csma)
