"""What the commit history costs, and how fast rollback and compare answer, at 100k entries.

Run with ``python -m tools.bench.history`` from the repository root. Two server cores in process
(journal fsynced per commit, as in production) are seeded with ``--size`` bench-list entries
(tests/yang/bench-list, a list under a container): one without history or audit, one with both
as ``catsctl serve`` runs (sqlite history and audit in the state directory). One-entry creates
are timed on each, alternating in rounds so that the load of a shared machine falls on both
alike; the rate with history is then given as a ratio of the rate without (target: at least
0.8). Then, on the core with history, ``cc:rollback`` of a one-entry commit (one validated
transaction of its reverse edits, its compare included) and ``cc:compare`` of running against
the previous commit are timed as the server runs them (the RPC handlers in process: server time,
no transport). Targets: at most 50 ms each. The machine's load average is printed with the
figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from controller.admin import Admin
from controller.audit import SqliteAudit, SqliteHistory, install
from controller.datastore import Core, CoreSettings
from controller.datastore.api import SYSTEM, DatastoreName, Edit, EditOperation
from controller.model import Schema
from controller.types import DataPath
from tools.bench.libyang_validation import YANG_DIR
from tools.bench.shapes import CONTAINER_LIST

RUNNING = DatastoreName.RUNNING
RATIO_TARGET = 0.8
LATENCY_TARGET_MS = 50.0


def seeded(schema: Schema, folder: Path, size: int, settings: CoreSettings) -> Core:
    """A core on ``folder`` holding ``size`` entries."""
    core = Core(schema, folder, settings=settings)
    seed = Edit(EditOperation.REPLACE, DataPath("/"), CONTAINER_LIST.seed(size))
    core.edit(RUNNING, [seed], SYSTEM)
    return core


def creates(core: Core, serials: dict[str, int], name: str, count: int) -> list[float]:
    """Seconds of ``count`` one-entry creates on ``core``."""
    times: list[float] = []
    for _ in range(count):
        edit = CONTAINER_LIST.good(serials[name])
        serials[name] += 1
        began = time.perf_counter()
        core.edit(RUNNING, [edit], SYSTEM)
        times.append(time.perf_counter() - began)
    return times


def ms(values: list[float]) -> str:
    """Median and p90 in milliseconds."""
    ordered = sorted(values)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return f"median {statistics.median(values) * 1000:7.2f} ms, p90 {p90 * 1000:7.2f} ms"


def commit_ratio(off: Core, on: Core, audit: SqliteAudit, args: argparse.Namespace) -> float:
    """Creates on both cores in alternating rounds (audit on while the history core commits);
    prints the rates; the ratio of the median commit times (robust on a loaded machine)."""
    serials = {"off": args.size, "on": args.size + 10_000_000}
    creates(off, serials, "off", 5)  # warm-up
    creates(on, serials, "on", 5)
    off_times: list[float] = []
    on_times: list[float] = []
    for _ in range(args.rounds):
        off_times += creates(off, serials, "off", args.per_round)
        install(audit)
        on_times += creates(on, serials, "on", args.per_round)
        install(None)
    rate_off = len(off_times) / sum(off_times)
    rate_on = len(on_times) / sum(on_times)
    ratio = statistics.median(off_times) / statistics.median(on_times)
    print(f"commits without history:    {rate_off:7.1f}/s ({ms(off_times)})")
    print(f"commits with history+audit: {rate_on:7.1f}/s ({ms(on_times)})")
    print(
        f"rate ratio with/without: by medians {ratio:.3f}, by means {rate_on / rate_off:.3f} "
        f"(target >= {RATIO_TARGET})"
    )
    return ratio


def review_times(
    on: Core, history: SqliteHistory, audit: SqliteAudit, samples: int, size: int
) -> tuple[list[float], list[float]]:
    """Server times of cc:rollback of a one-entry commit and cc:compare with the previous
    commit, each after a fresh one-entry commit."""
    install(audit)
    admin = Admin(lambda: on, history, audit, kept=1000)
    serials = {"on": size + 20_000_000}
    rollbacks: list[float] = []
    compares: list[float] = []
    try:
        for _ in range(samples):
            creates(on, serials, "on", 1)
            previous = str(on.running.txid - 1)
            began = time.perf_counter()
            admin.compare(SYSTEM, {"source": previous})
            compares.append(time.perf_counter() - began)
            began = time.perf_counter()
            admin.rollback(SYSTEM, {"back": 1})
            rollbacks.append(time.perf_counter() - began)
    finally:
        install(None)
    print(f"rollback of a one-entry commit:              {ms(rollbacks)}")
    print(f"compare running against the previous commit: {ms(compares)}")
    return rollbacks, compares


def load_average(when: str) -> None:
    """Print the machine's load average."""
    one, five, fifteen = os.getloadavg()
    print(f"load average {when}: {one:.2f} {five:.2f} {fifteen:.2f} (cores: {os.cpu_count()})")


def main() -> int:
    """Measure and print; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=20)
    parser.add_argument("--samples", type=int, default=30, help="rollbacks and compares timed")
    args = parser.parse_args()
    load_average("before")
    with Schema.for_server([YANG_DIR]) as schema, tempfile.TemporaryDirectory() as temp:
        off_dir, on_dir = Path(temp, "off"), Path(temp, "on")
        on_dir.mkdir()
        history = SqliteHistory(on_dir, 1000)
        audit = SqliteAudit(on_dir, 100_000)
        started = time.perf_counter()
        off = seeded(schema, off_dir, args.size, CoreSettings())
        on = seeded(schema, on_dir, args.size, CoreSettings(history=history))
        print(f"seeded two cores with {args.size} entries in {time.perf_counter() - started:.1f} s")
        try:
            ratio = commit_ratio(off, on, audit, args)
            rollbacks, compares = review_times(on, history, audit, args.samples, args.size)
        finally:
            for closing in (off, on, history, audit):
                closing.close()
    load_average("after")
    missed = [
        name
        for name, bad in (
            ("ratio", ratio < RATIO_TARGET),
            ("rollback", statistics.median(rollbacks) * 1000 > LATENCY_TARGET_MS),
            ("compare", statistics.median(compares) * 1000 > LATENCY_TARGET_MS),
        )
        if bad
    ]
    print("targets: " + ("all met" if not missed else "MISSED " + ", ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
