"""``catsctl evaluate``: trace-driven evaluation of selection policies.

Prints the table (p50/p95/p99 TTFT, SLO attainment, cache hit ratio, cross-region share and
decisions on estimated or stale values, per policy and load level) and writes into
``--out``: ``results.json`` (every run, RFC 8259 JSON), ``table.md`` and the three figures.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from controller.evaluate.shipped import ALL, DEFAULT_TOPOLOGY, DEFAULT_TRACE, NAMES, RECOMMENDED


def _floats(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas: {text}") from exc
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers: {text}")
    return values


def _names(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [n for n in names if n not in ALL]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown policy {unknown[0]}; one of {', '.join(ALL)}")
    return names


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``evaluate`` sub-command."""
    parser = commands.add_parser(
        "evaluate", help="replay a request trace over a topology against selection policies"
    )
    parser.add_argument(
        "--trace",
        type=Path,
        default=DEFAULT_TRACE,
        metavar="JSONL",
        help="a Mooncake trace (default: the shipped synthetic trace)",
    )
    parser.add_argument(
        "--topology",
        type=Path,
        default=DEFAULT_TOPOLOGY,
        metavar="JSON",
        help="sites, delays and instance figures (default: the shipped three regions)",
    )
    parser.add_argument(
        "--policy-config",
        type=Path,
        default=RECOMMENDED,
        metavar="JSON",
        help="the C-PS configuration the cats policies run (YANG instance data; default: the "
        "recommended cats-llm-policy.json)",
    )
    parser.add_argument(
        "--policies",
        type=_names,
        default=NAMES,
        metavar="A,B,...",
        help=f"the policies to run (default: {','.join(NAMES)}; all: {','.join(ALL)})",
    )
    parser.add_argument(
        "--loads",
        type=_floats,
        default=(0.5, 0.7, 0.9),
        metavar="F,...",
        help="offered load as fractions of the topology's prefill capacity (default 0.5,0.7,0.9)",
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=1.0,
        metavar="S",
        help="the SCIs' reporting interval at every load level (default 1 s)",
    )
    parser.add_argument(
        "--intervals",
        type=_floats,
        default=(0.1, 0.3, 1.0, 3.0, 10.0),
        metavar="S,...",
        help="the reporting intervals of the sweep (default 0.1,0.3,1,3,10 s)",
    )
    parser.add_argument(
        "--sweep-load",
        type=float,
        default=0.7,
        metavar="F",
        help="the load of the interval sweep (default 0.7)",
    )
    parser.add_argument("--slo", type=float, default=2.0, metavar="S", help="TTFT bound (2 s)")
    parser.add_argument(
        "--seed", type=int, default=1, help="seeds which region each conversation enters at"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (default: the cores, at most 2)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("evaluation"),
        metavar="DIR",
        help="where results.json, table.md and the figures go (default ./evaluation)",
    )
    parser.add_argument("--no-plots", action="store_true", help="write no figures")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from controller.evaluate.command import run  # noqa: PLC0415 - the simulator, when it runs

    return run(args)
