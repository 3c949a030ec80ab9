"""``catsctl forwarder``: run a CATS-Forwarder serving ietf-cats-steering.

The C-PS edits its steering configuration over NETCONF (candidate and confirmed commit) or
RESTCONF; clients send HTTP requests to the data-plane port naming the service with a
``CATS-Service-Id`` header or a ``/cats/<cs-id>/`` path prefix (agents.forwarder.proxy).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agents.common.cli import listen_address, run_until_signalled
from controller.commandline import DefaultsShown, add_operations_arguments

if TYPE_CHECKING:
    from agents.forwarder.config import ForwarderConfig


def _load(args: argparse.Namespace) -> ForwarderConfig:
    from agents.forwarder.config import (  # noqa: PLC0415
        ForwarderConfig,
        Role,
        load_config,
        with_overrides,
    )

    config = load_config(args.config) if args.config is not None else ForwarderConfig()
    roles = frozenset(Role(r) for r in args.role) if args.role else None
    return with_overrides(
        config,
        state_dir=args.state_dir,
        forwarder_id=args.forwarder_id,
        roles=roles,
        listen=args.listen,
        netconf_port=args.netconf_port,
        restconf_port=args.restconf_port,
    )


def _cmd_forwarder(args: argparse.Namespace) -> int:
    """Validate the configuration, then serve until SIGTERM or SIGINT."""
    from agents.common.cli import start_operations  # noqa: PLC0415
    from agents.forwarder.agent import run_forwarder  # noqa: PLC0415

    start_operations(args, "forwarder")
    config = _load(args)  # a ConfigError here ends catsctl with the items (controller/cli.py)
    if args.check:
        print(f"{args.config}: valid forwarder configuration", file=sys.stderr)
        return 0
    if not config.users:
        print("catsctl forwarder: no [[users]]: nobody can edit the steering", file=sys.stderr)
    # an OSError (status 1): a port in use, an unwritable or foreign state directory
    return run_until_signalled(
        "forwarder", lambda signals: run_forwarder(config, signals, clean=args.clean)
    )


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``forwarder`` sub-command to ``catsctl``."""
    parser = commands.add_parser(
        "forwarder",
        formatter_class=DefaultsShown,
        help="run a CATS-Forwarder: steering rules over NETCONF, HTTP forwarding to SCIs",
        description=__doc__,
    )
    parser.add_argument("--config", type=Path, metavar="FILE", help="TOML or JSON configuration")
    parser.add_argument("--state-dir", type=Path, metavar="DIR", help="running configuration")
    parser.add_argument("--clean", action="store_true", help="start with an empty state directory")
    parser.add_argument("--forwarder-id", metavar="ID", help="router ID, address or identifier")
    parser.add_argument(
        "--role", action="append", choices=("ingress", "egress"), help="repeat for both"
    )
    parser.add_argument(
        "--listen",
        type=listen_address,
        metavar="ADDR:PORT",
        help="data-plane HTTP address and port",
    )
    parser.add_argument("--netconf-port", type=int, metavar="PORT")
    parser.add_argument("--restconf-port", type=int, metavar="PORT")
    parser.add_argument("--check", action="store_true", help="validate the configuration and exit")
    add_operations_arguments(parser, "forwarder")
    parser.set_defaults(handler=_cmd_forwarder)
