"""Validated edits per second of the server core, in process, by datastore size and shape.

Run with ``python -m tools.bench.datastore`` from the repository root. For each shape
(:mod:`tools.bench.shapes`: a list under a container, a top-level list, a list whose entries
hold a small nested list) and each size it starts a :class:`~controller.datastore.Core` on a
fresh state directory (journal fsynced per commit, as in production), seeds it with ``size``
instances, and times one-instance creates through :meth:`Core.edit` (parse, apply, validate,
commit hooks, persist, notify). It also checks that a dangling leafref, a duplicate unique value
and a missing mandatory leaf are refused at every size, and prints the largest/smallest ratio.
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation
from controller.errors import CatsError
from controller.model import Schema
from controller.types import DataPath
from tools.bench.libyang_validation import SIZES, TARGET_RATE, YANG_DIR
from tools.bench.shapes import SHAPES, Shape

RUNNING = DatastoreName.RUNNING
BUDGET_S = 2.0
MAX_ITERS = 2000
MIN_ITERS = 3
PERCENT = 100


def refused(core: Core, edit: Edit) -> str:
    """The error-tag a bad edit got ("ACCEPTED" if it was not refused)."""
    try:
        core.edit(RUNNING, [edit], SYSTEM)
    except CatsError as exc:
        return exc.items[0].app_tag or exc.items[0].tag
    return "ACCEPTED"


def run(
    schema: Schema, shape: Shape, size: int, budget: float, *, incremental: bool
) -> tuple[list[float], dict[str, str], str]:
    """Seed a core, time creates, check refusals: (times, verdicts, note)."""
    with tempfile.TemporaryDirectory() as folder:
        settings = CoreSettings(incremental=incremental)
        with Core(schema, Path(folder), settings=settings) as core:
            started = time.perf_counter()
            seed = Edit(EditOperation.REPLACE, DataPath("/"), shape.seed(size))
            core.edit(RUNNING, [seed], SYSTEM)
            seeded = time.perf_counter() - started
            verdicts = {label: refused(core, make(size)) for label, make in shape.bad.items()}
            times: list[float] = []
            began = time.perf_counter()
            while len(times) < MAX_ITERS and (
                len(times) < MIN_ITERS or time.perf_counter() - began < budget
            ):
                edit = shape.good(size + len(times))
                tick = time.perf_counter()
                core.edit(RUNNING, [edit], SYSTEM)
                times.append(time.perf_counter() - tick)
            stats = core.validation_stats()
            note = f"seed {seeded:.2f} s; validations local {stats.local}, full {stats.full}"
    return times, verdicts, note


def line(label: str, size: int, times: Sequence[float], verdicts: dict[str, str]) -> str:
    """One table row."""
    ordered = sorted(times)
    p99 = ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)] * 1000
    rate = len(times) / sum(times)
    checks = " ".join("ok" if v != "ACCEPTED" else "WRONG" for v in verdicts.values())
    return (
        f"| {label:<26} | {size:>7} | {len(times):>5} | {rate:>9.1f} "
        f"| {statistics.median(times) * 1000:>7.3f} | {p99:>7.3f} | {checks} |"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and print the table and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds per size")
    parser.add_argument("--full", action="store_true", help="also measure whole-tree validation")
    args = parser.parse_args(argv)
    modes = [True, False] if args.full else [True]
    rates: dict[str, dict[int, float]] = {}
    with Schema.for_server([YANG_DIR]) as schema:
        print(
            "| shape, validation          | entries | iters |    ops/s |  p50 ms |  p99 ms "
            "| refused: dangling unique mandatory |"
        )
        print(
            "|----------------------------|--------:|------:|---------:|--------:|--------:|------|"
        )
        notes = []
        for name in args.shapes:
            for incremental in modes:
                for size in args.sizes:
                    shape = SHAPES[name]
                    times, verdicts, note = run(
                        schema, shape, size, args.budget, incremental=incremental
                    )
                    label = f"{name}, {'local' if incremental else 'full'}"
                    print(line(label, size, times, verdicts), flush=True)
                    notes.append(f"{label} {size}: {note}; refusals {verdicts}")
                    if incremental:
                        rates.setdefault(name, {})[size] = len(times) / sum(times)
    for note in notes:
        print(note)
    for name, by_size in rates.items():
        small, large = by_size[min(by_size)], by_size[max(by_size)]
        ok = large >= TARGET_RATE and large >= small / 2
        print(
            f"{name}: {large:.0f} edits/s at {max(by_size)}, {small:.0f} at {min(by_size)} "
            f"(ratio {PERCENT * large / small:.0f}%): target {'MET' if ok else 'NOT MET'}"
        )


if __name__ == "__main__":
    main()
