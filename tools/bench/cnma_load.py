"""C-PS ingest load produced by the C-NMA under each reporting policy (service-metrics-op 8).

Run with ``python -m tools.bench.cnma_load`` from the repository root. It generates a topology
of one ingress, four P-routers and EGRESSES egress forwarders (each behind one P-router), then
plays DURATION seconds of C-NMA intervals through the C-NMA's own code (path computation,
:func:`agents.cnma.report.plan`, report building): each interval N% of the egresses see their
access-link delay change by 1-5 ms. It prints, per policy, the reports/s, entries/s and bytes/s
the C-PS receives, and the C-NMA's computation time per interval:

- heartbeat only: changes never cross the thresholds, one full report per heartbeat;
- delta on change: every change is reported in a delta, plus the heartbeat's full reports.

With ``--live`` it also starts ``catsctl serve`` and posts each policy's report stream back to
back over RESTCONF, to show the C-PS's ingest capacity for that mix next to the load.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import requests

from agents.cnma.config import DelayUnit, Thresholds
from agents.cnma.paths import PathPolicy, network_service_table
from agents.cnma.report import MODULE, OPERATION, Metadata, network_report, plan
from agents.cnma.topology import Link, Node, Role, Topology
from controller.auth import hash_password
from controller.selection.units import Micros
from controller.types import ForwarderId, Json
from tools.bench.common import ROOT, YANG_DIR, free_port, stop

EGRESSES = 100
TRANSIT = 4
INTERVAL_S = 1.0
HEARTBEAT_S = 60.0
DURATION_S = 600.0
CHANGE_PERCENTS = (1, 10, 50)
USER, PASSWORD = "cnma-bench", "cnma-bench-password"
NEVER = Thresholds(
    delay_absolute=Micros(2**31),
    jitter_absolute=Micros(2**31),
    bandwidth_relative=Decimal(10**6),
    loss_absolute=1_000_000,
)
EVERY = Thresholds()


def topology(egresses: int, access: dict[ForwarderId, Micros] | None = None) -> Topology:
    """1 ingress, TRANSIT P-routers linked to it, each egress behind one P-router.

    ``access`` gives the access-link delay of each egress (default 3 ms + 37 us per egress).
    """
    ingress = ForwarderId("10.0.0.1")
    transit = [ForwarderId(f"P{n}") for n in range(TRANSIT)]
    leaves = [ForwarderId(f"10.1.{n // 250}.{n % 250 + 1}") for n in range(egresses)]
    delays = access or {e: Micros(3000 + 37 * n) for n, e in enumerate(leaves)}
    nodes = (
        Node(ingress, Role.INGRESS),
        *(Node(p, Role.TRANSIT) for p in transit),
        *(Node(e, Role.EGRESS) for e in leaves),
    )
    core = [
        Link(ingress, p, Micros(2000 + 500 * n), Micros(100), 10_000, 10, igp_metric=10)
        for n, p in enumerate(transit)
    ]
    edge = [
        Link(transit[n % TRANSIT], e, delays[e], Micros(200), 1000, 50, igp_metric=10)
        for n, e in enumerate(leaves)
    ]
    links = [*core, *edge]
    return Topology(nodes, (*links, *(link.reversed() for link in links)))


def step_delays(
    delays: dict[ForwarderId, Micros], rng: random.Random, percent: int
) -> dict[ForwarderId, Micros]:
    """The access delays after ``percent`` % of the egresses moved by 1-5 ms (staying >= 1 ms)."""
    moved = rng.sample(sorted(delays), round(len(delays) * percent / 100))
    after = dict(delays)
    for egress in moved:
        shift = rng.randint(1000, 5000)
        after[egress] = Micros(
            delays[egress] + shift
            if delays[egress] <= shift
            else delays[egress] + rng.choice((-1, 1)) * shift
        )
    return after


@dataclass(frozen=True)
class Load:
    """What one policy sent over the simulated duration."""

    policy: str
    full: int
    delta: int
    entries: int
    octets: int
    compute_ms: float
    reports: tuple[Json, ...]


def simulate(name: str, percent: int, thresholds: Thresholds, args: argparse.Namespace) -> Load:
    """Play the C-NMA's intervals for one policy; returns what the C-PS would receive."""
    rng = random.Random(percent)
    delays = {e: Micros(3000 + 37 * n) for n, e in enumerate(topology(args.egresses).egresses)}
    acknowledged = None
    full = delta = entries = octets = 0
    reports: list[Json] = []
    compute = 0.0
    last_full = float("-inf")
    meta = Metadata(datetime.now(UTC), Micros(int(args.heartbeat * 3e6)), USER)
    steps = int(args.duration / args.interval)
    for step in range(steps):
        now = step * args.interval
        if step:
            delays = step_delays(delays, rng, percent)
        began = time.perf_counter()
        current = topology(args.egresses, delays)
        table = network_service_table(current, PathPolicy())
        due = now - last_full >= args.heartbeat
        report = plan(acknowledged, table, thresholds, heartbeat_due=due)
        if report is not None:
            members = network_report(step + 1, datetime.now(UTC), report, DelayUnit.US, meta)
            octets += len(json.dumps({f"{MODULE}:input": members}))
            entries += len(report.paths)
            full, delta = (full + 1, delta) if report.kind.value == "full" else (full, delta + 1)
            last_full = now if report.kind.value == "full" else last_full
            acknowledged = report.acknowledged(acknowledged)
            reports.append(members)
        compute += time.perf_counter() - began
    return Load(name, full, delta, entries, octets, compute * 1000 / steps, tuple(reports))


def policies(args: argparse.Namespace) -> Iterator[Load]:
    """Heartbeat only, then delta on change for each change percentage."""
    yield simulate(f"heartbeat only ({max(args.changes)}% change)", max(args.changes), NEVER, args)
    for percent in args.changes:
        yield simulate(f"delta on change, {percent}% of paths", percent, EVERY, args)


def start_cps(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``catsctl serve`` with the bench user and the rate limit off; returns it and its root."""
    init = folder / "init.json"
    init.write_text(
        json.dumps(
            {
                "ietf-system:system": {
                    "authentication": {
                        "user": [{"name": USER, "password": hash_password(PASSWORD)}]
                    }
                },
                "ietf-cats-service-metrics:update-control": {"rate-limit": {"enabled": False}},
            }
        )
    )
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "controller.cli",
        "serve",
        "--state-dir",
        str(folder / "state"),
        "--yang-dir",
        str(YANG_DIR),
        "--init-data",
        str(init),
        "--restconf-port",
        str(port),
        "--netconf-port",
        "0",
    ]
    with (folder / "serve.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
    root = f"http://127.0.0.1:{port}/restconf"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            requests.get(f"{root}/", timeout=1)
            return process, root
        except requests.ConnectionError:
            time.sleep(0.2)
    stop(process, timeout=10)
    raise SystemExit("catsctl serve did not start")


def ingest(session: requests.Session, root: str, load: Load, sequence: int) -> tuple[float, int]:
    """Post the policy's reports back to back; returns (seconds, next sequence)."""
    url = f"{root}/operations/{MODULE}:{OPERATION}"
    headers = {"Content-Type": "application/yang-data+json"}
    began = time.perf_counter()
    for members in load.reports:
        sequence += 1
        body = members | {
            "sequence-number": str(sequence),
            "timestamp": datetime.now(UTC).isoformat(),
        }
        reply = session.post(url, json.dumps({f"{MODULE}:input": body}), headers=headers)
        if reply.status_code != 200:  # noqa: PLR2004
            raise SystemExit(f"report refused: {reply.status_code} {reply.text}")
    return time.perf_counter() - began, sequence


def main(argv: list[str] | None = None) -> int:
    """Print the load of each policy (and the C-PS's ingest capacity with --live)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--egresses", type=int, default=EGRESSES)
    parser.add_argument("--interval", type=float, default=INTERVAL_S)
    parser.add_argument("--heartbeat", type=float, default=HEARTBEAT_S)
    parser.add_argument("--duration", type=float, default=DURATION_S)
    parser.add_argument("--changes", type=int, nargs="+", default=list(CHANGE_PERCENTS))
    parser.add_argument("--live", action="store_true", help="also time a real C-PS ingesting")
    args = parser.parse_args(argv)
    loads = list(policies(args))
    print(
        f"{args.egresses} egresses, interval {args.interval} s, heartbeat {args.heartbeat} s, "
        f"{args.duration:.0f} s simulated"
    )
    print(
        f"{'policy':<34} {'full':>5} {'delta':>6} {'reports/s':>10} {'entries/s':>10} "
        f"{'bytes/s':>9} {'C-NMA ms/interval':>18}"
    )
    for load in loads:
        reports = load.full + load.delta
        print(
            f"{load.policy:<34} {load.full:>5} {load.delta:>6} "
            f"{reports / args.duration:>10.3f} {load.entries / args.duration:>10.2f} "
            f"{load.octets / args.duration:>9.0f} {load.compute_ms:>18.2f}"
        )
    if args.live:
        with tempfile.TemporaryDirectory(prefix="bench-cnma-") as temp:
            process, root = start_cps(Path(temp))
            try:
                with requests.Session() as session:
                    session.auth = (USER, PASSWORD)
                    sequence = 0
                    print(
                        f"\n{'C-PS ingest, back to back':<34} {'reports/s':>10} {'entries/s':>10}"
                    )
                    for load in loads:
                        seconds, sequence = ingest(session, root, load, sequence)
                        count = len(load.reports)
                        print(
                            f"{load.policy:<34} {count / seconds:>10.0f} "
                            f"{load.entries / seconds:>10.0f}"
                        )
            finally:
                stop(process, timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
