"""``catsctl cnma``: run the C-NMA (service-metrics-op 6.2.2, 8; agent-selection-mapping MSG-7)."""

from __future__ import annotations

import argparse
import functools
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.common.cli import add_login_arguments, password_flag
from controller.commandline import DefaultsShown, add_operations_arguments

if TYPE_CHECKING:
    from agents.cnma.config import CnmaConfig
    from agents.common.restconf import Transport


def _connect(config: CnmaConfig) -> Transport:
    """The SDK's client: RESTCONF, or NETCONF when ``[cps] netconf`` names the C-PS's NETCONF
    address (agents.cnma.sdk_transport)."""
    from agents.cnma.sdk_transport import SdkTransport  # noqa: PLC0415 - light start-up

    return SdkTransport(config.cps)


def _overrides(args: argparse.Namespace, config: CnmaConfig) -> CnmaConfig:
    from agents.cnma.config import with_overrides  # noqa: PLC0415

    return with_overrides(
        config,
        url=args.cps_url,
        username=args.username,
        password=password_flag(args.password_file),
        heartbeat_ms=args.heartbeat_ms,
    )


def _cmd_cnma(args: argparse.Namespace) -> int:
    """Load and validate the configuration, then report until SIGTERM or SIGINT."""
    from agents.cnma.agent import Agent, reload_config  # noqa: PLC0415
    from agents.common.cli import start_operations  # noqa: PLC0415
    from agents.common.sequence import SequenceStore  # noqa: PLC0415

    start_operations(args, "cnma")
    if not args.verbose:  # ncclient logs every message it sends at INFO
        logging.getLogger("ncclient").setLevel(logging.WARNING)
    load = reload_config(args.config, functools.partial(_overrides, args))
    config = load()  # a ConfigError here ends catsctl with the items (controller/cli.py)
    if args.check:
        print(f"{args.config}: valid C-NMA configuration", file=sys.stderr)
        return 0
    agent = Agent(load, _connect, SequenceStore(args.state_dir), config)

    def on_stop(*_: Any) -> None:
        agent.stop.set()
        agent.wake.set()

    def on_reload(*_: Any) -> None:
        agent.reload.set()
        agent.wake.set()

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGHUP, on_reload)
    return agent.run()


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``cnma`` sub-command to ``catsctl``."""
    cnma = commands.add_parser(
        "cnma",
        allow_abbrev=False,  # --heartbeat (seconds, before) must not pass as --heartbeat-ms
        formatter_class=DefaultsShown,
        help="run the C-NMA: report network path metrics (NST) to the C-PS",
        description=__doc__,
    )
    cnma.add_argument(
        "--config", type=Path, required=True, metavar="FILE", help="TOML or JSON configuration"
    )
    cnma.add_argument(
        "--state-dir",
        type=Path,
        default=Path("cnma-state"),
        metavar="DIR",
        help="where the report sequence number persists (default ./cnma-state)",
    )
    add_login_arguments(cnma, "C-NMA")
    cnma.add_argument(
        "--heartbeat-ms",
        type=int,
        metavar="MS",
        help="milliseconds between full reports (replaces reporting/heartbeat-ms)",
    )
    cnma.add_argument("--check", action="store_true", help="validate the configuration and exit")
    add_operations_arguments(cnma, "cnma")
    cnma.set_defaults(handler=_cmd_cnma)
