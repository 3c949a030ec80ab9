"""``catsctl service-instance``: run one service instance (agents.service_instance.app)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from agents.common.http import HttpServer, parse_listen
from agents.common.logs import configure_logging

DISTRIBUTIONS = ("fixed", "uniform", "exponential")

LOG = logging.getLogger("agents.service_instance")


def _cmd(args: argparse.Namespace) -> int:
    from agents.service_instance.app import (  # noqa: PLC0415
        InstanceSettings,
        ServiceInstance,
        ServiceTime,
    )
    from agents.service_instance.prefill import PrefillSettings  # noqa: PLC0415

    configure_logging(verbose=args.verbose)
    try:
        address, port = parse_listen(args.listen)
    except ValueError as exc:
        print(f"catsctl service-instance: {exc}", file=sys.stderr)
        return 2
    settings = InstanceSettings(
        args.name,
        args.capacity,
        ServiceTime(args.service_time, args.mean_ms, args.spread_ms),
        args.queue,
        None
        if args.prefill_rate is None
        else PrefillSettings(args.prefill_rate, args.kv_blocks, args.block_tokens),
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    app = ServiceInstance(settings, args.seed)
    threads = max(4, args.capacity + args.queue + 4)
    try:
        with HttpServer(app, address, port, name=f"si-{args.name}", threads=threads) as server:
            LOG.info("service instance %s ready on %s:%d", args.name, address, server.port)
            stop.wait()
    except OSError as exc:
        print(f"catsctl service-instance: {exc}", file=sys.stderr)
        return 1
    return 0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``service-instance`` to ``catsctl``'s sub-commands."""
    parser = commands.add_parser(
        "service-instance",
        help="run a test service instance (service time, capacity, /metrics, /health, /admin)",
    )
    parser.add_argument("--listen", default="127.0.0.1:9000", metavar="ADDR:PORT")
    parser.add_argument("--name", default="si", help="instance name (X-Instance-Id)")
    parser.add_argument("--capacity", type=int, default=8, help="concurrent slots")
    parser.add_argument("--queue", type=int, default=0, help="waiting places beyond capacity")
    parser.add_argument("--service-time", choices=DISTRIBUTIONS, default="fixed")
    parser.add_argument("--mean-ms", type=float, default=10.0, metavar="MS")
    parser.add_argument("--spread-ms", type=float, default=0.0, metavar="MS", help="uniform: +-")
    parser.add_argument("--seed", type=int, help="random seed of the service times")
    parser.add_argument(
        "--prefill-rate",
        type=float,
        metavar="TOKENS/S",
        help="serve POSTed LLM prompts (hash_ids, input_length) with the prefill model of "
        "catsctl evaluate: one at a time at this rate, reusing cached prefixes",
    )
    parser.add_argument("--kv-blocks", type=int, default=1931, metavar="N")
    parser.add_argument("--block-tokens", type=int, default=512, metavar="N")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.set_defaults(handler=_cmd)
