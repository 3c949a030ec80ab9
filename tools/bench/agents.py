"""Agent benchmarks: request throughput through an SCI, one function per measurement.

Run with ``python -m tools.bench.agents`` from the repository root. It starts two real
``catsctl service-instance`` processes (zero service time, 64 slots each) and a real
``catsctl sci`` in front of them on loopback, then drives keep-alive clients for a few seconds:

* :func:`direct_throughput`: requests/s straight to the instances (the baseline);
* :func:`sci_dispatch_throughput`: requests/s through the SCI's Dispatcher (affinity lookup,
  policy, slot accounting, forwarding, header hygiene, response-time sampling).

The ratio of the two is the SCI's cost. Further measurements (the C-PS ingest load of the
C-NMA and C-SMA reports) are meant to be added as functions of the same shape.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import requests

from tools.bench.common import ROOT, Figure, drive, figure, free_port, stop

CAPACITY = 64


def _wait(url: str, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{process.args!r} exited during start-up")
        with contextlib.suppress(requests.RequestException):
            if requests.get(url, timeout=1).ok:
                return
        time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


@contextlib.contextmanager
def _process(command: list[str], log: Path, ready_url: str) -> Iterator[None]:
    with log.open("ab") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=sink)
    try:
        _wait(ready_url, process)
        yield
    finally:
        stop(process, timeout=10)


def _config(port: int, instances: Sequence[int]) -> dict[str, object]:
    return {
        "ietf-cats-sci:sci": {
            "csci-id": f"127.0.0.1:{port}",
            "cs-id": "BENCH",
            "client-interface": {"address": "127.0.0.1", "port": port},
            "c-sma": {"restconf-uri": f"http://127.0.0.1:{free_port()}/restconf"},
            "service-instance": [
                {
                    "si-id": f"si-{n}",
                    "address": "127.0.0.1",
                    "port": p,
                    "metrics-uri": f"http://127.0.0.1:{p}/metrics",
                    "health-uri": f"http://127.0.0.1:{p}/health",
                    "max-capacity": CAPACITY,
                }
                for n, p in enumerate(instances)
            ],
            "metric-collection": {"sampling-interval": 1},
            "health-monitoring": {
                "liveness": {"method": "http-get", "interval": 1, "timeout": 500},
                "readiness": {"interval": 1, "timeout": 500},
                "hysteresis": {"failures-to-down": 2, "passes-to-up": 1},
            },
            "dispatch": {"algorithm": "ietf-cats-sci:least-connections"},
            "reporting": {"heartbeat-interval": 3600},
        }
    }


def _rate(urls: Sequence[str], name: str, threads: int) -> Figure:
    """Keep-alive clients, each on its own URL of ``urls`` in turn, for SECONDS."""
    clients = [(requests.Session(), urls[n % len(urls)]) for n in range(threads)]

    def one(client: tuple[requests.Session, str], _: int) -> str | None:
        session, url = client
        reply = session.get(url, timeout=10)
        return None if reply.status_code == 200 else f"{reply.status_code}"  # noqa: PLR2004

    latencies, elapsed, failures = drive(clients, one, 1)
    for session, _ in clients:
        session.close()
    if failures:
        print(f"  {name}: {len(failures)} failed requests ({failures[0]})", file=sys.stderr)
    return figure(0, name, threads, latencies, elapsed)


def direct_throughput(instances: Sequence[int], threads: int) -> Figure:
    """Requests/s straight to the service instances (no SCI)."""
    return _rate([f"http://127.0.0.1:{p}/work" for p in instances], "direct", threads)


def sci_dispatch_throughput(sci_port: int, threads: int) -> Figure:
    """Requests/s through the SCI to the same instances."""
    return _rate([f"http://127.0.0.1:{sci_port}/work"], "through-sci", threads)


def _wait_healthy(manage: int, count: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(requests.RequestException, KeyError, ValueError):
            state = requests.get(f"http://127.0.0.1:{manage}/state", timeout=1).json()
            if state["ietf-cats-sci:sci"]["state"]["health-summary"]["healthy"] == count:
                return
        time.sleep(0.1)
    raise SystemExit("the SCI did not see its instances healthy")


def main(argv: list[str] | None = None) -> int:
    """Start the instances and the SCI, measure, print the table and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args(argv)
    python = [sys.executable, "-m", "controller.cli"]
    with (
        tempfile.TemporaryDirectory(prefix="bench-agents-") as temp,
        contextlib.ExitStack() as stack,
    ):
        folder = Path(temp)
        instances = [free_port(), free_port()]
        for n, port in enumerate(instances):
            stack.enter_context(
                _process(
                    [
                        *python,
                        "service-instance",
                        "--listen",
                        f"127.0.0.1:{port}",
                        "--name",
                        f"si-{n}",
                        "--capacity",
                        str(CAPACITY),
                        "--mean-ms",
                        "0",
                    ],
                    folder / f"si-{n}.log",
                    f"http://127.0.0.1:{port}/health",
                )
            )
        sci, manage = free_port(), free_port()
        config = folder / "sci.json"
        config.write_text(json.dumps(_config(sci, instances)))
        stack.enter_context(
            _process(
                [
                    *python,
                    "sci",
                    "--config",
                    str(config),
                    "--state-dir",
                    str(folder / "sci"),
                    "--manage",
                    f"127.0.0.1:{manage}",
                    "--threads",
                    "64",
                ],
                folder / "sci.log",
                f"http://127.0.0.1:{manage}/state",
            )
        )
        _wait_healthy(manage, len(instances))
        print(f"{'measurement':<14} {'clients':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
        for threads in args.threads:
            direct = direct_throughput(instances, threads)
            through = sci_dispatch_throughput(sci, threads)
            for fig in (direct, through):
                print(
                    f"{fig.operation:<14} {fig.threads:>7} {fig.rate:>9.0f} "
                    f"{fig.p50_ms:>8.2f} {fig.p99_ms:>8.2f}"
                )
            print(f"{'ratio':<14} {threads:>7} {through.rate / direct.rate:>9.2f}  (SCI / direct)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
