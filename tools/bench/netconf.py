"""NETCONF round trips of ``catsctl serve`` at 1k, 10k and 100k list entries.

Run with ``python -m tools.bench.netconf`` from the repository root. For each size it seeds
``tests/yang/bench-list@2026-11-30.yang`` through ``--init-data`` (as tools.bench.restconf
does), starts a real server on loopback and measures, over plain paramiko sessions (base:1.1
chunked framing; no client-side polling to measure), with one session and with eight:

* ``get-config``: one entry by subtree filter;
* ``edit-config``: merge of one entry's name and weight into running (validated edit).

It also sends edit-configs that must be refused (dangling leafref, duplicate unique address,
missing mandatory name) and checks each is refused and changes nothing, at every size, and
prints the 100k/1k rate ratio of each operation (target >= 0.5: a read of one entry by its key
is narrowed to that entry, an edit validates locally).
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

import paramiko

from controller.netconf.framing import Deframer, frame
from controller.netconf.messages import BASE_11, BASE_NS
from tools.bench.restconf import PASSWORD, SIZES, USER, YANG_DIR, Figure, seed

ROOT = Path(__file__).resolve().parents[2]
THREADS = (1, 8)
SECONDS = 1.5
START_TIMEOUT_S = 180.0
BL = "urn:example:bench-list"
HELLO = (
    f'<hello xmlns="{BASE_NS}"><capabilities><capability>{BASE_11}</capability>'
    "</capabilities></hello>"
).encode()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Session:
    """One NETCONF session on paramiko: hello, then one rpc at a time."""

    def __init__(self, port: int) -> None:
        self.transport = paramiko.Transport(socket.create_connection(("127.0.0.1", port), 30))
        self.transport.connect(username=USER, password=PASSWORD)
        self.channel = self.transport.open_session()
        self.channel.settimeout(60)
        self.channel.invoke_subsystem("netconf")
        self.deframer = Deframer(1 << 30)
        self.receive()
        self.channel.sendall(frame(HELLO, chunked=False))
        self.deframer.use_chunked()
        self.count = 0

    def receive(self) -> bytes:
        """The next message."""
        while (message := self.deframer.next_message()) is None:
            data = self.channel.recv(65536)
            if not data:
                raise EOFError
            self.deframer.feed(data)
        return message

    def rpc(self, body: str) -> bytes:
        """One rpc round trip; the reply's bytes."""
        self.count += 1
        message = f'<rpc xmlns="{BASE_NS}" message-id="{self.count}">{body}</rpc>'
        self.channel.sendall(frame(message.encode(), chunked=True))
        return self.receive()

    def close(self) -> None:
        """Drop the connection."""
        self.transport.close()


def get_entry(session: Session, key: int) -> bool:
    """get-config of one entry by subtree filter; True when the entry came back."""
    reply = session.rpc(
        f'<get-config><source><running/></source><filter type="subtree"><bench xmlns="{BL}">'
        f"<entry><id>{key}</id></entry></bench></filter></get-config>"
    )
    return b"<rpc-error" not in reply and f"<id>{key}</id>".encode() in reply


def _edit(entry: str) -> str:
    return (
        f'<edit-config><target><running/></target><config><bench xmlns="{BL}">'
        f"{entry}</bench></config></edit-config>"
    )


def edit_entry(session: Session, key: int) -> bool:
    """Merge a new name and weight into one entry; True on ``<ok/>``."""
    entry = f"<entry><id>{key}</id><name>n{key}</name><weight>{1 + key * 7 % 1000}</weight>"
    return b"<ok/>" in session.rpc(_edit(entry + "</entry>"))


OPERATIONS: dict[str, Callable[[Session, int], bool]] = {
    "get-config": get_entry,
    "edit-config": edit_entry,
}


def measure(port: int, size: int, name: str, threads: int) -> Figure:
    """Run one operation from ``threads`` sessions for SECONDS; latencies in ms."""
    operation = OPERATIONS[name]
    latencies: list[float] = []
    failures: list[int] = []
    lock = threading.Lock()
    sessions = [Session(port) for _ in range(threads)]
    deadline = time.monotonic() + SECONDS

    def run(session: Session, offset: int) -> None:
        mine: list[float] = []
        key = offset
        while time.monotonic() < deadline:
            began = time.perf_counter()
            if not operation(session, key % size):
                failures.append(key % size)
            mine.append((time.perf_counter() - began) * 1000)
            key += 7919
        with lock:
            latencies.extend(mine)

    began = time.monotonic()
    workers = [
        threading.Thread(target=run, args=(session, n * 104_729))
        for n, session in enumerate(sessions)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - began
    for session in sessions:
        session.close()
    if failures:
        raise SystemExit(f"{name} at {size}: {len(failures)} failed, e.g. key {failures[0]}")
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return Figure(size, name, threads, len(ordered) / elapsed, statistics.median(ordered), p99)


def check_rejections(port: int, size: int) -> list[str]:
    """Edits that must be refused, each with the datastore unchanged; returns the failures."""
    session = Session(port)
    new = size + 1
    cases = {
        "dangling leafref": "<name>x</name><addr>192.0.2.1</addr><target>nowhere</target>",
        "duplicate unique": "<name>x</name><addr>10.0.0.1</addr><target>t1</target>",
        "missing mandatory": "<addr>192.0.2.2</addr><target>t1</target>",
    }
    problems: list[str] = []
    try:
        for reason, leaves in cases.items():
            reply = session.rpc(_edit(f"<entry><id>{new}</id>{leaves}</entry>"))
            if b"<rpc-error" not in reply:
                problems.append(f"{reason}: not refused")
            if get_entry(session, new):
                problems.append(f"{reason}: the entry was created")
    finally:
        session.close()
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
        "--init-data", str(init), "--restconf-port", str(_free_port()),
        "--netconf-port", str(port),
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
            Session(port).close()
        except (OSError, EOFError, paramiko.SSHException):
            time.sleep(0.2)
        else:
            return
    raise SystemExit("catsctl serve did not start")


def main(argv: list[str] | None = None) -> int:
    """Measure every size and print the table, the rate ratios and the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args(argv)
    figures: list[Figure] = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-netconf-") as temp:
        for size in args.sizes:
            found, problems, started = run_size(size, Path(temp))
            figures += found
            print(
                f"{size:>7} entries: server ready in {started:.1f}s; refused edits: "
                f"{problems or 'all refused, nothing changed'}",
                flush=True,
            )
            failed = failed or bool(problems)
    print(f"\n{'entries':>8} {'op':<11} {'sessions':>8} {'rpc/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for fig in figures:
        print(
            f"{fig.size:>8} {fig.operation:<11} {fig.threads:>8} {fig.rate:>9.0f} "
            f"{fig.p50_ms:>8.2f} {fig.p99_ms:>8.2f}"
        )
    rates = {(f.size, f.operation, f.threads): f.rate for f in figures}
    small, large = min(args.sizes), max(args.sizes)
    missed = False
    print()
    for name in OPERATIONS:
        for threads in THREADS:
            ratio = rates[(large, name, threads)] / rates[(small, name, threads)]
            met = ratio >= 0.5  # noqa: PLR2004
            missed = missed or not met
            print(
                f"{name} {threads} session(s): {large}/{small} ratio {ratio:.2f}"
                f"  (target >= 0.50: {'met' if met else 'MISSED'})"
            )
    return 1 if missed or failed else 0


if __name__ == "__main__":
    sys.exit(main())
