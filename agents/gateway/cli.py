"""``catsctl gateway``: play agent sessions against the C-PS from a description
(agent-selection-mapping 8.1, 9.1: MSG-1, MSG-2, MSG-14, MSG-15, MSG-16).

Exit status: 0 when every RPC succeeded and every ``expect`` held, 1 when an RPC failed or an
expectation did not, 2 when the description (or a flag) is refused; then nothing is sent.
Over RESTCONF, or NETCONF with --netconf. The description format is agents/gateway/FORMAT.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from agents.common.config import ConfigError, Table

USAGE_ERROR = 2


def _refused(exc: ConfigError) -> int:
    for item in exc.items:
        where = f"{item.path}: " if item.path else ""
        print(f"catsctl gateway: {where}{item.message}", file=sys.stderr)
    return USAGE_ERROR


def _cmd_gateway(args: argparse.Namespace) -> int:
    """Load and check the description, then play it (unless ``--check``)."""
    from agents.common.cli import password_flag  # noqa: PLC0415
    from agents.common.cps import DEFAULT_CPS_URL, CpsSettings  # noqa: PLC0415
    from agents.common.logs import configure_logging  # noqa: PLC0415
    from agents.gateway.client import Cps, RestconfCps  # noqa: PLC0415
    from agents.gateway.description import load_description  # noqa: PLC0415
    from agents.gateway.netconf import NetconfCps  # noqa: PLC0415
    from agents.gateway.plan import check, plan  # noqa: PLC0415
    from agents.gateway.runner import Runner  # noqa: PLC0415
    from controller.model import Schema  # noqa: PLC0415

    configure_logging(verbose=args.verbose)
    if not args.verbose:  # the refusals are printed with their place; libyang's log repeats them
        logging.getLogger("libyang").setLevel(logging.CRITICAL)
    try:
        description = load_description(args.description)
        plans = plan(description)
        with Schema() as schema:
            check(plans, schema, time.time(), description.file)
        password = password_flag(args.password_file)
        netconf = None
        if args.netconf is not None:
            netconf = Table({"--netconf": args.netconf}, "command line").endpoint("--netconf")
    except ConfigError as exc:
        return _refused(exc)
    if args.check:
        count = sum(len(s.exchanges) for p in plans for s in p.stages)
        print(f"{args.description}: valid description, {len(plans)} sessions, {count} requests")
        return 0
    url = (args.cps_url or DEFAULT_CPS_URL).rstrip("/")
    settings = CpsSettings(url, args.username, password, args.timeout_ms / 1000)
    cps: Cps = RestconfCps(settings) if netconf is None else NetconfCps(settings, netconf)
    runner = Runner(cps, sys.stdout)
    try:
        outcome = runner.run(plans)
    finally:
        cps.close()
        if args.log is not None:
            document = runner.journal.document(description.file)
            args.log.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"{outcome.failed} failed RPCs, {outcome.missed} unmet expectations")
    return 0 if outcome.ok else 1


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``gateway`` sub-command to ``catsctl``."""
    gateway = commands.add_parser(
        "gateway",
        allow_abbrev=False,  # --timeout (seconds, before) must not pass as --timeout-ms
        help="the agent gateway: play agent sessions against the C-PS from a description",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gateway.add_argument(
        "description", type=Path, metavar="FILE", help="the session description (JSON)"
    )
    gateway.add_argument(
        "--cps-url", metavar="URL", help="RESTCONF root of the C-PS (default 127.0.0.1:8080)"
    )
    gateway.add_argument(
        "--netconf",
        metavar="HOST:PORT",
        help="speak NETCONF over SSH to the C-PS there instead of RESTCONF (same user)",
    )
    gateway.add_argument("--username", metavar="USER", help="the gateway's user at the C-PS")
    gateway.add_argument(
        "--password-file", type=Path, metavar="FILE", help="first line: the gateway's password"
    )
    gateway.add_argument(
        "--timeout-ms",
        type=int,
        default=10_000,
        metavar="MS",
        help="per request, in milliseconds (default 10000)",
    )
    gateway.add_argument(
        "--log", type=Path, metavar="FILE", help="write every request and reply as JSON"
    )
    gateway.add_argument(
        "--check", action="store_true", help="validate the description and exit; send nothing"
    )
    gateway.add_argument("-v", "--verbose", action="store_true")
    gateway.set_defaults(handler=_cmd_gateway)
