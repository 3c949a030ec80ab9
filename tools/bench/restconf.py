"""RESTCONF edit and read throughput of ``catsctl serve`` at 1k, 10k and 100k list entries.

Run with ``python -m tools.bench.restconf`` from the repository root. For each size it seeds
``tests/yang/bench-list@2026-11-30.yang`` (entries with a leafref, a ``unique`` address and a
mandatory name) through ``--init-data``, starts a real server on loopback, and measures over
keep-alive connections (``http.client``), with one client thread and with eight:

* ``PATCH``: plain merge of one entry's ``weight`` and ``name`` (validated edit);
* ``PUT``: replace one whole entry;
* ``GET``: read one entry.

It also sends edits that must be refused (dangling leafref, duplicate unique address, missing
mandatory name) and checks that each is refused and changes nothing, at every size. Targets
(issue 3): at 100k entries at least 200 validated edits/s, and no less than half the 1k figure.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.restconf.auth import hash_password

ROOT = Path(__file__).resolve().parents[2]
YANG_DIR = ROOT / "tests" / "yang"
SIZES = (1_000, 10_000, 100_000)
TARGETS = 300
THREADS = (1, 8)
SECONDS = 1.5
TARGET_RATE = 200.0
USER, PASSWORD = "bench", "bench-password"
AUTH = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
JSON = "application/yang-data+json"
ENTRY = "/restconf/data/bench-list:bench/entry"
START_TIMEOUT_S = 180.0
PERCENT = 100


@dataclass(frozen=True)
class Figure:
    """One measured cell."""

    size: int
    operation: str
    threads: int
    rate: float
    p50_ms: float
    p99_ms: float


def seed(size: int) -> dict[str, object]:
    """Running at start: the bench user, the targets and ``size`` entries."""
    entries = [
        {"id": key, "name": f"e{key}", "addr": f"10.{key >> 16}.{(key >> 8) & 255}.{key & 255}",
         "target": f"t{key % TARGETS}", "weight": 1 + key % 1000}
        for key in range(size)
    ]  # fmt: skip
    return {
        "ietf-system:system": {
            "authentication": {"user": [{"name": USER, "password": hash_password(PASSWORD)}]}
        },
        "bench-list:bench": {
            "target": [{"name": f"t{n}"} for n in range(TARGETS)],
            "entry": entries,
        },
    }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Client:
    """One keep-alive connection."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, bytes]:
        """One request; returns status and body."""
        headers = {"Authorization": AUTH, "Accept": JSON}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = JSON
        self.connection.request(method, path, body=data, headers=headers)
        reply = self.connection.getresponse()
        return reply.status, reply.read()


Operation = Callable[[Client, int], int]


def patch(client: Client, key: int) -> int:
    """Merge a new weight and name into an entry."""
    body = {"bench-list:entry": [{"id": key, "weight": 1 + (key * 7) % 1000, "name": f"p{key}"}]}
    return client.call("PATCH", f"{ENTRY}={key}", body)[0]


def put(client: Client, key: int) -> int:
    """Replace an entry with the same address (its unique value stays its own)."""
    addr = f"10.{key >> 16}.{(key >> 8) & 255}.{key & 255}"
    body = {"bench-list:entry": [
        {"id": key, "name": f"r{key}", "addr": addr, "target": f"t{(key + 1) % TARGETS}"}
    ]}  # fmt: skip
    return client.call("PUT", f"{ENTRY}={key}", body)[0]


def get(client: Client, key: int) -> int:
    """Read one entry."""
    return client.call("GET", f"{ENTRY}={key}")[0]


OPERATIONS: dict[str, tuple[Operation, int]] = {
    "PATCH": (patch, 204),
    "PUT": (put, 204),
    "GET": (get, 200),
}


def measure(port: int, size: int, name: str, threads: int) -> Figure:
    """Run one operation from ``threads`` clients for SECONDS; latencies in ms."""
    operation, expected = OPERATIONS[name]
    latencies: list[float] = []
    failures: list[int] = []
    lock = threading.Lock()
    deadline = time.monotonic() + SECONDS

    def run(offset: int) -> None:
        client = Client(port)
        mine: list[float] = []
        key = offset
        while time.monotonic() < deadline:
            began = time.perf_counter()
            status = operation(client, key % size)
            mine.append((time.perf_counter() - began) * 1000)
            if status != expected:
                failures.append(status)
            key += 7919
        with lock:
            latencies.extend(mine)

    began = time.monotonic()
    workers = [threading.Thread(target=run, args=(n * 104_729,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - began
    if failures:
        raise SystemExit(f"{name} at {size}: unexpected statuses {sorted(set(failures))}")
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return Figure(size, name, threads, len(ordered) / elapsed, statistics.median(ordered), p99)


def check_rejections(port: int, size: int) -> list[str]:
    """Edits that must be refused, each with the datastore unchanged; returns the failures."""
    client = Client(port)
    new = size + 1
    cases = {
        "dangling leafref": {"id": new, "name": "x", "addr": "192.0.2.1", "target": "nowhere"},
        "duplicate unique": {"id": new, "name": "x", "addr": "10.0.0.1", "target": "t1"},
        "missing mandatory": {"id": new, "addr": "192.0.2.2", "target": "t1"},
    }
    problems: list[str] = []
    for reason, entry in cases.items():
        status, _ = client.call("PUT", f"{ENTRY}={new}", {"bench-list:entry": [entry]})
        if not 400 <= status < 500:  # noqa: PLR2004
            problems.append(f"{reason}: status {status}")
        if client.call("GET", f"{ENTRY}={new}")[0] != 404:  # noqa: PLR2004
            problems.append(f"{reason}: the entry was created")
    return problems


def run_size(size: int, folder: Path) -> tuple[list[Figure], list[str], float]:
    """Seed, start, measure and stop one server; returns figures, problems and start time."""
    init = folder / f"init-{size}.json"
    init.write_text(json.dumps(seed(size)))
    port = _free_port()
    log = (folder / f"serve-{size}.log").open("wb")
    command = [
        sys.executable, "-m", "controller.cli", "serve",
        "--state-dir", str(folder / f"state-{size}"), "--yang-dir", str(YANG_DIR),
        "--init-data", str(init), "--restconf-port", str(port),
    ]  # fmt: skip
    began = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
    try:
        _wait(port, process)
        started = time.monotonic() - began
        problems = check_rejections(port, size)
        figures = [measure(port, size, name, threads) for name in OPERATIONS for threads in THREADS]
        problems += check_rejections(port, size)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
    return figures, problems, started


def _wait(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("catsctl serve exited during start-up")
        try:
            if Client(port).call("GET", "/restconf/yang-library-version")[0] == 200:  # noqa: PLR2004
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("catsctl serve did not start")


def main(argv: list[str] | None = None) -> int:
    """Measure every size and print the table, the ratios and the verdicts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args(argv)
    figures: list[Figure] = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-restconf-") as temp:
        for size in args.sizes:
            found, problems, started = run_size(size, Path(temp))
            figures += found
            print(
                f"{size:>7} entries: server ready in {started:.1f}s; refused edits: "
                f"{problems or 'all refused, nothing changed'}",
                flush=True,
            )
            failed = failed or bool(problems)
    print(f"\n{'entries':>8} {'op':<6} {'threads':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for fig in figures:
        print(
            f"{fig.size:>8} {fig.operation:<6} {fig.threads:>7} {fig.rate:>9.0f} "
            f"{fig.p50_ms:>8.2f} {fig.p99_ms:>8.2f}"
        )
    return 1 if _verdicts(figures, args.sizes) or failed else 0


def _verdicts(figures: list[Figure], sizes: list[int]) -> bool:
    """Print the 100k/1k ratios and whether the targets hold; True when one does not."""
    small, large = min(sizes), max(sizes)
    rates = {(f.size, f.operation, f.threads): f.rate for f in figures}
    missed = False
    print()
    for name in ("PATCH", "PUT", "GET"):
        for threads in THREADS:
            low, high = rates[(small, name, threads)], rates[(large, name, threads)]
            ratio = high / low
            line = f"{name:<6} {threads} thread(s): {large}/{small} ratio {ratio:.2f}"
            if name != "GET":
                ok = high >= TARGET_RATE and ratio >= 0.5  # noqa: PLR2004
                missed = missed or not ok
                line += (
                    f"  (target >= {TARGET_RATE:.0f}/s and >= 0.50: {'met' if ok else 'MISSED'})"
                )
            print(line)
    return missed


if __name__ == "__main__":
    sys.exit(main())
