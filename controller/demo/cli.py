"""``catsctl demo`` on the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path

STAGE_KEYS = "NABCDRFG"
ACCESS_MS = 2  # the ingress -> P1 link: no path is shorter


def _stages(text: str) -> frozenset[str]:
    keys = frozenset(text.upper().replace(",", ""))
    if not keys or not keys <= set(STAGE_KEYS):
        raise argparse.ArgumentTypeError(f"expected letters of {STAGE_KEYS}, got {text!r}")
    return keys


def _checked_ms(text: str, too_low: Callable[[Decimal], bool], wanted: str) -> str:
    """``text`` if it is a finite number of milliseconds with at most 3 decimals that is not
    ``too_low``; else the argparse error, naming the bound ``wanted``."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal("NaN")  # refused below, as not finite
    if not value.is_finite() or too_low(value) or value != round(value, 3):
        message = f"expected milliseconds {wanted} (3 decimals), got {text!r}"
        raise argparse.ArgumentTypeError(message)
    return text


def _milliseconds(text: str) -> str:
    return _checked_ms(text, lambda value: value < ACCESS_MS, f">= {ACCESS_MS}")


def _positive_ms(text: str) -> str:
    return _checked_ms(text, lambda value: value <= 0, "> 0")


def _cmd_demo(args: argparse.Namespace) -> int:
    from controller.demo.run import DemoOptions, run_demo  # noqa: PLC0415 - light start-up

    options = DemoOptions(
        args.state_dir, args.keep, args.only, args.congested_delay, args.b_path_delay
    )
    return run_demo(options, sys.stdout)


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``demo``."""
    demo = commands.add_parser(
        "demo",
        help="run the end-to-end demonstration on loopback (service-metrics-op scenarios A-D, "
        "steering through the forwarders, an agent session of the agent draft)",
    )
    demo.add_argument(
        "--state-dir", type=Path, metavar="DIR", help="state and logs (default: a fresh one)"
    )
    demo.add_argument(
        "--keep", action="store_true", help="stay up after the summary, print how to connect"
    )
    demo.add_argument(
        "--only",
        type=_stages,
        default=frozenset(),
        metavar="KEYS",
        help=f"play only these stages, e.g. AB (of {STAGE_KEYS}; default all)",
    )
    demo.add_argument(
        "--congested-delay",
        type=_milliseconds,
        default="20",
        metavar="MS",
        help="CF-3's path delay during scenario B's congestion (the draft's 20 ms)",
    )
    demo.add_argument(
        "--b-path-delay",
        type=_positive_ms,
        default="400",
        metavar="MS",
        help="the p95 forwarding delay to candidate B in stage G (the draft's 400 ms)",
    )
    demo.set_defaults(handler=_cmd_demo)
