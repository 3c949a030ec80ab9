"""Agent benchmarks: request throughput through an SCI, one function per measurement.

Run with ``python -m tools.bench.agents`` from the repository root. It starts two real
``catsctl service-instance`` processes (zero service time, 64 slots each) and a real
``catsctl sci`` in front of them on loopback, then drives keep-alive clients for a few seconds:

* :func:`direct_throughput`: requests/s straight to the instances (the baseline);
* :func:`sci_dispatch_throughput`: requests/s through the SCI's Dispatcher (affinity lookup,
  policy, slot accounting, forwarding, header hygiene, response-time sampling).

The ratio of the two is the SCI's cost.

* :func:`csma_ingest_load`: the C-PS ingest load produced by the C-SMA of a site of SCIS (100)
  SCIs under each reporting policy (service-metrics-op 8): heartbeat only (a full report every
  heartbeat), delta-threshold with a realistic change rate, per-SCI entries or one aggregated
  entry per site. It plays DURATION simulated seconds of SCI reports through the C-SMA's own
  code (cache, aggregation, delta-threshold plan, report building: agents.csma), prints the
  offered load (reports/s, entries/s), then posts each policy's reports back to back to a real
  ``catsctl serve`` and prints the rate it ingests them at and what its report-senders counters
  accepted. ``--only csma`` skips the SCI measurements (as tools.bench.cnma_load does for the
  C-NMA).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import requests

from agents.csma import aggregate, cache
from agents.csma.report import MODULE, OPERATION, service_report
from agents.csma.thresholds import Plan, ReportType, Thresholds, plan
from agents.csma.values import Entry, EntryKey, Health, SciMetrics
from controller.types import CsciId, CsId, Json
from tools.bench.cnma_load import PASSWORD, USER, start_cps
from tools.bench.common import ROOT, Figure, drive, figure, free_port, stop

CAPACITY = 64
SCIS, SCI_CAPACITY, DURATION_S, SCI_INTERVAL_S, HEARTBEAT_S = 100, 400, 300.0, 1.0, 60.0
NEVER = Thresholds(2**31, Decimal(10**9), Decimal(10**9), health_change=False)
AT = "2026-11-30T12:00:00Z"


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
            "metric-collection": {"sampling-interval-ms": 1000},
            "health-monitoring": {
                "liveness": {"method": "http-get", "interval-ms": 1000, "timeout-ms": 500},
                "readiness": {"interval-ms": 1000, "timeout-ms": 500},
                "hysteresis": {"failures-to-down": 2, "passes-to-up": 1},
            },
            "dispatch": {"algorithm": "ietf-cats-sci:least-connections"},
            "reporting": {"heartbeat-interval-ms": 3_600_000},
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


@dataclass(frozen=True)
class CsmaLoad:
    """What one reporting policy of the C-SMA sent over the simulated duration."""

    policy: str
    reports: tuple[Json, ...]
    entries: int
    kinds: dict[str, int]


def _step(rng: random.Random, sci: SciMetrics) -> SciMetrics:
    """One SCI interval: sessions come and go (GAS moves by up to 2 % of capacity), the
    response time wobbles by up to 3 %, and rarely (0.05 %/s) the health flips."""
    moved = max(0, min(SCI_CAPACITY, sci.gas + rng.randint(-8, 8)))
    ct = (sci.computing_time or Decimal(20)) * Decimal(str(rng.uniform(0.97, 1.03)))
    health = sci.health
    if rng.random() < 0.0005:  # noqa: PLR2004
        health = Health.DEGRADED if health is Health.HEALTHY else Health.HEALTHY
    return SciMetrics(sci.cs_id, sci.csci_id, moved, ct.quantize(Decimal("0.001")), health, AT)


@dataclass(frozen=True)
class CsmaPolicy:
    """One reporting policy of the C-SMA (service-metrics-op 8)."""

    name: str
    thresholds: Thresholds
    per_site: bool
    full_heartbeat: bool


POLICIES = (
    CsmaPolicy("heartbeat only, per-SCI", NEVER, per_site=False, full_heartbeat=True),
    CsmaPolicy("heartbeat only, per-site", NEVER, per_site=True, full_heartbeat=True),
    CsmaPolicy("delta-threshold, per-SCI", Thresholds(), per_site=False, full_heartbeat=False),
    CsmaPolicy("delta-threshold, per-site", Thresholds(), per_site=True, full_heartbeat=False),
)


def simulate_csma(policy: CsmaPolicy, scis: int, duration: float) -> CsmaLoad:
    """Play ``duration`` seconds of SCI reports through the C-SMA's reporting logic."""
    rng = random.Random(7)
    metrics = [
        SciMetrics(
            CsId("BENCH"),
            CsciId(f"10.1.{n // 250}.{n % 250}:80"),
            200,
            Decimal(20),
            Health.HEALTHY,
            AT,
        )
        for n in range(scis)
    ]
    site_cache = cache.SiteCache()
    acknowledged: dict[EntryKey, Entry] | None = None
    reports: list[Json] = []
    kinds = dict.fromkeys((k.value for k in ReportType), 0)
    last_refresh, entries = float("-inf"), 0
    for step in range(int(duration / SCI_INTERVAL_S)):
        now = step * SCI_INTERVAL_S
        metrics = [_step(rng, m) for m in metrics] if step else metrics
        for sequence_metrics in metrics:
            arrival = cache.Arrival(sequence_metrics, step + 1, "sci")
            site_cache, _ = cache.accept(site_cache, arrival, now, 3 * HEARTBEAT_S)
        live = cache.live(site_cache, now)
        current = (
            aggregate.per_site(live, CsciId("SS-bench"), "SS-bench")
            if policy.per_site
            else aggregate.per_sci(live)
        )
        due = now - last_refresh >= HEARTBEAT_S
        planned: Plan | None = plan(
            acknowledged,
            current,
            policy.thresholds,
            heartbeat_due=due,
            heartbeat_full=policy.full_heartbeat,
        )
        if planned is None:
            continue
        at = datetime.now(UTC)
        reports.append(service_report(len(reports) + 1, at, planned, "SS-bench", 180_000))
        entries += len(planned.entries)
        kinds[planned.kind.value] += 1
        acknowledged = planned.acknowledged(acknowledged)
        if planned.kind is not ReportType.DELTA:
            last_refresh = now
    return CsmaLoad(policy.name, tuple(reports), entries, kinds)


def _accepted(session: requests.Session, root: str) -> tuple[int, int]:
    reply = session.get(f"{root}/data/ietf-cats-service-metrics:report-senders", timeout=30)
    senders = reply.json()["ietf-cats-service-metrics:report-senders"]["sender"]
    counters = next(s for s in senders if s["source"] == USER)["counters"]
    return int(counters["reports-accepted"]), int(counters["entries-accepted"])


def csma_ingest_load(scis: int = SCIS, duration: float = DURATION_S) -> None:
    """Print the offered load of each policy and a real C-PS's ingest of it."""
    loads = [simulate_csma(policy, scis, duration) for policy in POLICIES]
    print(
        f"\nC-SMA of {scis} SCIs (capacity {SCI_CAPACITY}, GAS +-2 %/s, CT +-3 %/s), "
        f"heartbeat {HEARTBEAT_S:.0f} s, {duration:.0f} s simulated"
    )
    print(
        f"{'policy':<28} {'full':>5} {'delta':>6} {'hb':>4} {'reports/s':>10} "
        f"{'entries/s':>10} | C-PS ingest {'reports/s':>10} {'entries/s':>10} "
        "accepted"
    )
    with tempfile.TemporaryDirectory(prefix="bench-csma-") as temp:
        process, root = start_cps(Path(temp))
        try:
            with requests.Session() as session:
                session.auth = (USER, PASSWORD)
                url = f"{root}/operations/{MODULE}:{OPERATION}"
                headers = {"Content-Type": "application/yang-data+json"}
                sequence = 0
                for load in loads:
                    before = _accepted_or_zero(session, root)
                    began = time.perf_counter()
                    for members in load.reports:
                        sequence += 1
                        body = members | {
                            "sequence-number": str(sequence),
                            "timestamp": datetime.now(UTC).isoformat(),
                        }
                        reply = session.post(
                            url, json.dumps({f"{MODULE}:input": body}), headers=headers, timeout=60
                        )
                        if reply.status_code != 200:  # noqa: PLR2004
                            raise SystemExit(f"report refused: {reply.text}")
                    seconds = time.perf_counter() - began
                    after = _accepted(session, root)
                    count = len(load.reports)
                    print(
                        f"{load.policy:<28} {load.kinds['full']:>5} {load.kinds['delta']:>6} "
                        f"{load.kinds['heartbeat']:>4} {count / duration:>10.3f} "
                        f"{load.entries / duration:>10.2f} | {'':>11}{count / seconds:>10.0f} "
                        f"{load.entries / seconds:>10.0f} {after[0] - before[0]} reports, "
                        f"{after[1] - before[1]} entries"
                    )
        finally:
            stop(process, timeout=10)


def _accepted_or_zero(session: requests.Session, root: str) -> tuple[int, int]:
    try:
        return _accepted(session, root)
    except (StopIteration, KeyError, ValueError):
        return 0, 0


def main(argv: list[str] | None = None) -> int:
    """Start the instances and the SCI, measure, print the table and the ratio; then the
    C-SMA's C-PS ingest load."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--only", choices=["sci", "csma"], help="run one group of measurements")
    parser.add_argument("--scis", type=int, default=SCIS)
    parser.add_argument("--duration", type=float, default=DURATION_S, help="simulated seconds")
    args = parser.parse_args(argv)
    if args.only != "sci":
        csma_ingest_load(args.scis, args.duration)
    if args.only == "csma":
        return 0
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
