"""The ``catsctl evaluate`` command itself: runs the matrix, prints the table and writes the
files (the command line is :mod:`controller.evaluate.cli`)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

from controller.evaluate.errors import invalid
from controller.evaluate.results import markdown, table
from controller.evaluate.runner import Matrix, Run, at_loads, by_interval, evaluate


def _validate(path: Path) -> None:
    """Refuse a policy file the modules do not accept, naming the offending path."""
    from controller.model import Encoding, InstanceKind, ModelError, Schema  # noqa: PLC0415

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise invalid(f"cannot read the policy: {exc}", str(path)) from exc
    with Schema() as schema:
        try:
            schema.validate(text, InstanceKind.CONFIG, Encoding.JSON)
        except ModelError as exc:
            raise invalid("; ".join(str(i) for i in exc.items), str(path)) from exc


def run(args: argparse.Namespace) -> int:
    """Run the matrix, print the table, write the files."""
    started = time.monotonic()
    _validate(args.policy_config)
    matrix = Matrix(
        trace=args.trace,
        topology=args.topology,
        policy=args.policy_config,
        policies=args.policies,
        loads=args.loads,
        interval=args.interval,
        intervals=args.intervals,
        sweep_load=args.sweep_load,
        slo=args.slo,
        seed=args.seed,
    )
    total = len(matrix.runs())
    done = [0]

    def progress(result: Run) -> None:
        done[0] += 1
        if not args.quiet:
            s = result.summary
            print(
                f"evaluate: {done[0]}/{total} {s.policy} at {s.load:.0%} load, "
                f"{s.interval:g} s reports: p99 {s.p99:.3f} s "
                f"({time.monotonic() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    runs = evaluate(matrix, args.jobs, progress)
    rows = at_loads(runs, matrix)
    print(table(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    document = {
        "trace": args.trace.name,
        "topology": args.topology.name,
        "policy-config": args.policy_config.name,
        "slo-s": args.slo,
        "loads": [s.as_json() for s in rows],
        "reporting-intervals": [s.as_json() for s in by_interval(runs, matrix)],
    }
    (args.out / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    (args.out / "table.md").write_text(markdown(rows, args.slo) + "\n")
    written = [args.out / "results.json", args.out / "table.md"]
    if not args.no_plots:
        from controller.evaluate.plots import write_all  # noqa: PLC0415

        written.extend(write_all(runs, matrix, args.out))
    for path in written:
        print(f"wrote {path}")
    print(f"{total} runs in {time.monotonic() - started:.0f} s; {_cpu()}")
    return 0


def _cpu() -> str:
    """The CPU seconds of this process and of its worker processes (counted once the pool
    has joined them), and the load average the run was measured against."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = own.ru_utime + own.ru_stime
    theirs = workers.ru_utime + workers.ru_stime
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"CPU {mine + theirs:.0f} s (command {mine:.0f} s, workers {theirs:.0f} s); "
        f"load average {load} on {os.cpu_count()} cores"
    )
