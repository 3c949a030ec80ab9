"""``catsctl csma``: run a C-SMA (service-metrics-op 6.1, 8; agent-selection-mapping 9.1)."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agents.common.cli import (
    add_login_arguments,
    listen_address,
    password_flag,
    run_until_signalled,
)
from controller.commandline import DefaultsShown, add_operations_arguments

if TYPE_CHECKING:
    from agents.csma.config import CsmaConfig


def _overrides(args: argparse.Namespace, config: CsmaConfig) -> CsmaConfig:
    from dataclasses import replace  # noqa: PLC0415

    from agents.csma.config import with_overrides  # noqa: PLC0415

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
        password=password_flag(args.password_file),
        heartbeat_ms=args.heartbeat_ms,
        server=server,
    )


def _load(args: argparse.Namespace) -> CsmaConfig:
    from agents.csma.config import load_config  # noqa: PLC0415

    return _overrides(args, load_config(args.config))


def _cmd_csma(args: argparse.Namespace) -> int:
    """Validate the configuration, then serve and report until SIGTERM or SIGINT."""
    from agents.common.cli import start_operations  # noqa: PLC0415
    from agents.csma.agent import run_csma  # noqa: PLC0415

    start_operations(args, "csma")
    load = functools.partial(_load, args)
    config = load()  # a ConfigError here ends catsctl with the items (controller/cli.py)
    if args.check:
        print(f"{args.config}: valid C-SMA configuration ({config.name})", file=sys.stderr)
        return 0
    return run_until_signalled("csma", functools.partial(run_csma, load))


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``csma`` sub-command to ``catsctl``."""
    csma = commands.add_parser(
        "csma",
        allow_abbrev=False,  # --heartbeat (seconds, before) must not pass as --heartbeat-ms
        formatter_class=DefaultsShown,
        help="run a C-SMA: receive SCI reports, report the site to the C-PS, serve state",
        description=__doc__,
    )
    csma.add_argument(
        "--config", type=Path, required=True, metavar="FILE", help="TOML or JSON configuration"
    )
    csma.add_argument(
        "--state-dir", type=Path, metavar="DIR", help="server state and report sequence numbers"
    )
    add_login_arguments(csma, "C-SMA")
    csma.add_argument(
        "--listen", type=listen_address, metavar="ADDR:PORT", help="RESTCONF address and port"
    )
    csma.add_argument("--restconf-port", type=int, metavar="PORT")
    csma.add_argument("--netconf-port", type=int, metavar="PORT", help="0 turns NETCONF off")
    csma.add_argument(
        "--heartbeat-ms",
        type=int,
        metavar="MS",
        help="milliseconds between heartbeats (replaces reporting/heartbeat-ms)",
    )
    csma.add_argument("--check", action="store_true", help="validate the configuration and exit")
    add_operations_arguments(csma, "csma")
    csma.set_defaults(handler=_cmd_csma)
