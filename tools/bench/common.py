"""What the RESTCONF and NETCONF benches share: the seeded server, timing, refusals, the table.

Both seed ``tests/yang/bench-list@2026-11-30.yang`` (entries with a leafref, a ``unique``
address and a mandatory name) through ``--init-data``, start ``catsctl serve`` on loopback,
drive one operation from several clients for SECONDS and check that bad edits are refused.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from controller.auth import hash_password
from controller.auth.policy import default_policy
from controller.demo import launch

ROOT = Path(__file__).resolve().parents[2]
YANG_DIR = ROOT / "tests" / "yang"
SIZES = (1_000, 10_000, 100_000)
TARGETS = 300
THREADS = (1, 8)
SECONDS = 1.5
USER, PASSWORD = "bench", "bench-password"
START_TIMEOUT_S = 180.0
C = TypeVar("C")
F = TypeVar("F")


@dataclass(frozen=True)
class Figure:
    """One measured cell."""

    size: int
    operation: str
    threads: int
    rate: float
    p50_ms: float
    p99_ms: float


#: A loopback port nobody listens on now: one chooser for every bed, below the kernel's
#: ephemeral range and never the same port twice in a process.
free_port = launch.free_port


def seed(size: int, nacm: dict[str, object] | None = None) -> dict[str, object]:
    """Running at start: the bench user, the targets and ``size`` entries; the bench user is
    the administrator of the shipped access-control policy unless ``nacm`` gives another
    (``ietf-netconf-acm:nacm`` members)."""
    entries = [
        {
            "id": key,
            "name": f"e{key}",
            "addr": f"10.{key >> 16}.{(key >> 8) & 255}.{key & 255}",
            "target": f"t{key % TARGETS}",
            "weight": 1 + key % 1000,
        }
        for key in range(size)
    ]
    policy = default_policy({"admin": [USER]})
    if nacm is not None:
        policy = {"ietf-netconf-acm:nacm": nacm}
    return {
        "ietf-system:system": {
            "authentication": {"user": [{"name": USER, "password": hash_password(PASSWORD)}]}
        },
        **policy,
        "bench-list:bench": {
            "target": [{"name": f"t{n}"} for n in range(TARGETS)],
            "entry": entries,
        },
    }


def bad_entries(new: int) -> dict[str, dict[str, object]]:
    """Entries (key ``new``) an edit must be refused for, by reason."""
    return {
        "dangling leafref": {"id": new, "name": "x", "addr": "192.0.2.1", "target": "nowhere"},
        "duplicate unique": {"id": new, "name": "x", "addr": "10.0.0.1", "target": "t1"},
        "missing mandatory": {"id": new, "addr": "192.0.2.2", "target": "t1"},
    }


def check_rejections(
    size: int,
    refuse: Callable[[dict[str, object]], str | None],
    exists: Callable[[int], bool],
) -> list[str]:
    """Send each bad entry (``refuse``: the problem, None when refused) and check it is absent."""
    new = size + 1
    problems: list[str] = []
    for reason, entry in bad_entries(new).items():
        problem = refuse(entry)
        if problem is not None:
            problems.append(f"{reason}: {problem}")
        if exists(new):
            problems.append(f"{reason}: the entry was created")
    return problems


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used (Linux /proc): load-independent."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """:func:`cpu_seconds` of a process and its children now alive (Linux /proc)."""
    total = cpu_seconds(pid)
    for child in child_processes(pid):
        with contextlib.suppress(FileNotFoundError):  # gone meanwhile
            total += cpu_seconds(child)
    return total


def child_processes(pid: int) -> list[int]:
    """The process ids of a process's children now (Linux /proc: each thread's)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def drive(
    clients: Sequence[C], operation: Callable[[C, int], F | None], size: int
) -> tuple[list[float], float, list[F]]:
    """Run ``operation`` from each client in its own thread for SECONDS.

    Returns the latencies in ms, the elapsed seconds and the failures (what ``operation``
    returned when not None).
    """
    latencies: list[float] = []
    failures: list[F] = []
    lock = threading.Lock()
    deadline = time.monotonic() + SECONDS

    def run(client: C, offset: int) -> None:
        mine: list[float] = []
        key = offset
        while time.monotonic() < deadline:
            began = time.perf_counter()
            failure = operation(client, key % size)
            mine.append((time.perf_counter() - began) * 1000)
            if failure is not None:
                failures.append(failure)
            key += 7919
        with lock:
            latencies.extend(mine)

    began = time.monotonic()
    workers = [
        threading.Thread(target=run, args=(client, n * 104_729)) for n, client in enumerate(clients)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return latencies, time.monotonic() - began, failures


def figure(size: int, name: str, threads: int, latencies: list[float], elapsed: float) -> Figure:
    """The rate, median and 99th percentile of one cell."""
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return Figure(size, name, threads, len(ordered) / elapsed, statistics.median(ordered), p99)


@dataclass(frozen=True)
class Bench:
    """One northbound's part of a bench run (the rest is :func:`main`)."""

    name: str
    description: str
    operations: tuple[str, ...]
    #: ``catsctl serve`` options given the port the bench talks to.
    options: Callable[[int], list[str]]
    #: Raises OSError (or returns False) while the server is not ready.
    ready: Callable[[int], bool]
    #: ``(port, size)`` -> problems.
    check_rejections: Callable[[int, int], list[str]]
    #: ``(port, size, operation, threads)`` -> the figure.
    measure: Callable[[int, int, str, int], Figure]
    #: Printed header labels: operation width, clients label, rate label.
    columns: tuple[int, str, str]
    #: Prints the verdict lines; True when a target is missed.
    verdicts: Callable[[list[Figure], list[int]], bool]
    #: Exceptions of ``ready`` that mean "not yet".
    not_ready: tuple[type[BaseException], ...] = (OSError,)


def run_size(bench: Bench, size: int, folder: Path) -> tuple[list[Figure], list[str], float]:
    """Seed, start, measure and stop one server; returns figures, problems and start time."""
    init = folder / f"init-{size}.json"
    init.write_text(json.dumps(seed(size)))
    port = free_port()
    log = (folder / f"serve-{size}.log").open("wb")
    command = [
        sys.executable,
        "-m",
        "controller.cli",
        "serve",
        "--state-dir",
        str(folder / f"state-{size}"),
        "--yang-dir",
        str(YANG_DIR),
        "--init-data",
        str(init),
        *bench.options(port),
    ]
    began = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
    try:
        _wait(bench, port, process)
        started = time.monotonic() - began
        problems = bench.check_rejections(port, size)
        figures = [
            bench.measure(port, size, name, threads)
            for name in bench.operations
            for threads in THREADS
        ]
        problems += bench.check_rejections(port, size)
    finally:
        stop(process, timeout=30)
        log.close()
    return figures, problems, started


def stop(process: subprocess.Popen[bytes], *, timeout: float) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait(bench: Bench, port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("catsctl serve exited during start-up")
        try:
            if bench.ready(port):
                return
        except bench.not_ready:
            time.sleep(0.2)
    raise SystemExit("catsctl serve did not start")


def print_table(figures: Sequence[Figure], columns: tuple[int, str, str]) -> None:
    """The figures, one row each."""
    width, clients, rate = columns
    print(
        f"\n{'entries':>8} {'op':<{width}} {clients:>{len(clients)}} {rate:>9} "
        f"{'p50 ms':>8} {'p99 ms':>8}"
    )
    for fig in figures:
        print(
            f"{fig.size:>8} {fig.operation:<{width}} {fig.threads:>{len(clients)}} "
            f"{fig.rate:>9.0f} {fig.p50_ms:>8.2f} {fig.p99_ms:>8.2f}"
        )


def main(bench: Bench, argv: list[str] | None = None) -> int:
    """Measure every size and print the table, the ratios and the verdicts."""
    parser = argparse.ArgumentParser(description=bench.description)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args(argv)
    figures: list[Figure] = []
    failed = False
    with tempfile.TemporaryDirectory(prefix=f"bench-{bench.name}-") as temp:
        for size in args.sizes:
            found, problems, started = run_size(bench, size, Path(temp))
            figures += found
            print(
                f"{size:>7} entries: server ready in {started:.1f}s; refused edits: "
                f"{problems or 'all refused, nothing changed'}",
                flush=True,
            )
            failed = failed or bool(problems)
    print_table(figures, bench.columns)
    return 1 if bench.verdicts(figures, args.sizes) or failed else 0
