"""Decisions per second of the selection core in process, and select-service and metric ingest
through a real server (service-metrics-op 6.2.3, 8).

Run with ``python -m tools.bench.selection`` from the repository root. It builds one CS-ID with
10,000 CSCIs behind 1,000 Egress CATS-Forwarders (10 each) and NST paths from 4 ingresses,
seeded so every run sees the same tables, then times ``select`` (the TST index) without and
with hard constraints, ``explain`` (every candidate) for reference, and the cost of one CST
change and one NST change to the maintained index. Every fast decision is checked against
``explain`` on a sample. Then :mod:`tools.bench.selection_rpc` loads the same shape of tables
into a ``catsctl serve`` over RESTCONF and times ingest and select-service (``--no-server``
skips it). Targets: TARGET decisions/s in process, selection_rpc.SELECT_TARGET select-service
calls/s over RESTCONF and selection_rpc.INGEST_TARGET CST entries/s ingested; it exits non-zero
when one is missed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence

from controller.selection.joint import (
    CstEntry,
    HardConstraints,
    NstEntry,
    Requirement,
    SelectionIndex,
    SelectionRequest,
    SelectionSettings,
    explain,
    from_ms,
    from_us,
    select,
)
from controller.types import CsciId, CsId, ForwarderId
from tools.bench import selection_rpc

CS = CsId("bench-service")
NOW = 10_000.0
TARGET = 20_000
SECONDS = 1.0
MICROS = 1e6
P99 = 99
CONSTRAINED = Requirement(HardConstraints(min_security_level=4, max_price=60, min_bandwidth=300))
"""About 1 candidate in 4 feasible: the walk stops after a handful."""
STRICT = Requirement(
    HardConstraints(min_security_level=6, max_price=40, min_bandwidth=400, max_loss_rate=500)
)
"""About 1 candidate in 16 feasible: the walk visits about 20 (reported, not a target)."""
SETTINGS = SelectionSettings()


def ingress(number: int) -> ForwarderId:
    """The name of one ingress forwarder."""
    return ForwarderId(f"10.0.0.{number + 1}")


def build(rng: random.Random, csci: int, egresses: int, ingresses: int) -> SelectionIndex:
    """One CS-ID: ``csci`` entries spread over ``egresses``, paths from every ingress."""
    index = SelectionIndex()
    for number in range(csci):
        egress = ForwarderId(f"cf-{number % egresses}")
        index.put_cst(
            CstEntry(
                CS,
                CsciId(f"sci-{number}"),
                gas=rng.randint(1, 500),
                computing_time=from_us(rng.randint(1_000, 50_000)),
                last_updated=NOW,
                expiry=NOW + 180,
                price=rng.randint(0, 100),
                reputation=rng.randint(0, 10),
                security_level=rng.randint(0, 10),
                egress=egress,
            )
        )
    for source in range(ingresses):
        for number in range(egresses):
            index.put_nst(path(rng, ingress(source), ForwarderId(f"cf-{number}")))
    return index


def path(rng: random.Random, source: ForwarderId, egress: ForwarderId) -> NstEntry:
    """A random NST entry."""
    return NstEntry(
        source,
        egress,
        from_us(rng.randint(500, 80_000)),
        NOW,
        jitter=from_ms(rng.randint(0, 5)),
        bandwidth=rng.randint(100, 1_000),
        loss_rate=rng.randint(0, 1_000),
    )


def timed(action: Callable[[int], object], seconds: float) -> list[float]:
    """Run ``action(i)`` for about ``seconds``; the duration of each call."""
    times: list[float] = []
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        start = time.perf_counter()
        action(len(times))
        times.append(time.perf_counter() - start)
    return times


def line(name: str, times: Sequence[float]) -> float:
    """Print one row; returns the rate."""
    rate = len(times) / sum(times)
    cuts = statistics.quantiles(times, n=100)
    print(
        f"{name:<34} {rate:>12,.0f}/s  p50 {cuts[49] * MICROS:>9.1f} us"
        f"  p99 {cuts[P99 - 1] * MICROS:>9.1f} us  ({len(times)} runs)"
    )
    return rate


def check(index: SelectionIndex, requirement: Requirement, ingresses: int, samples: int) -> int:
    """How many sampled fast decisions disagree with explain (must be 0)."""
    wrong = 0
    for turn in range(samples):
        req = SelectionRequest(CS, ingress(turn % ingresses), NOW, requirement, turn=turn)
        fast, full = select(index, req, SETTINGS), explain(index.cst, index.nst, req, SETTINGS)
        wrong += fast.csci_id != full.csci_id
    return wrong


def main(argv: list[str] | None = None) -> int:
    """Build the tables, time decisions and updates, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csci", type=int, default=10_000)
    parser.add_argument("--egresses", type=int, default=1_000)
    parser.add_argument("--ingresses", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--rounds", type=int, default=5, help="CST rounds through the server (first: the load)"
    )
    parser.add_argument("--no-server", action="store_true", help="in-process figures only")
    parser.add_argument(
        "--restconf-workers",
        type=int,
        default=0,
        metavar="N",
        help="the server's --restconf-workers (0: RESTCONF in the server process)",
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    index = build(rng, args.csci, args.egresses, args.ingresses)
    shape = f"{args.egresses} egresses, {args.ingresses} ingresses"
    print(f"{args.csci} CSCIs of one CS-ID behind {shape}")
    rates = []
    for name, requirement in (
        ("select, no constraints", Requirement()),
        ("select, hard constraints", CONSTRAINED),
        ("select, strict hard constraints", STRICT),
    ):

        def decide(turn: int, requirement: Requirement = requirement) -> object:
            req = SelectionRequest(CS, ingress(turn % args.ingresses), NOW, requirement, turn=turn)
            return select(index, req, SETTINGS)

        rate = line(name, timed(decide, args.seconds))
        if requirement is not STRICT:
            rates.append(rate)
        full = select(index, SelectionRequest(CS, ingress(0), NOW, requirement), SETTINGS)
        print(f"{'':<34} examined {len(full.candidates)} candidates; winner {full.csci_id}")
    for name, requirement in (
        ("explain, no constraints", Requirement()),
        ("explain, hard constraints", CONSTRAINED),
    ):

        def scan(turn: int, requirement: Requirement = requirement) -> object:
            req = SelectionRequest(CS, ingress(turn % args.ingresses), NOW, requirement, turn=turn)
            return explain(index.cst, index.nst, req, SETTINGS)

        line(name, timed(scan, args.seconds))

    def cst_change(turn: int) -> None:
        entry = index.cst.get(CS, CsciId(f"sci-{rng.randrange(args.csci)}"))
        assert entry is not None
        index.put_cst(
            CstEntry(
                CS,
                entry.csci_id,
                entry.gas,
                from_us(rng.randint(1_000, 50_000)),
                NOW,
                NOW + 180,
                entry.price,
                entry.reputation,
                entry.security_level,
                egress=entry.egress,
            )
        )

    def nst_change(turn: int) -> None:
        index.put_nst(
            path(
                rng,
                ingress(turn % args.ingresses),
                ForwarderId(f"cf-{rng.randrange(args.egresses)}"),
            )
        )

    line("update: one CST entry changed", timed(cst_change, args.seconds))
    line("update: one NST entry changed", timed(nst_change, args.seconds))
    wrong = sum(check(index, r, args.ingresses, 40) for r in (Requirement(), CONSTRAINED, STRICT))
    print(f"fast select vs explain on 120 sampled decisions after the updates: {wrong} disagree")
    ok = wrong == 0 and min(rates) >= TARGET
    print(f"{'in-process select':<40} {min(rates) / TARGET:>5.2f} x target {TARGET:,} decisions/s")
    if not args.no_server:
        server = selection_rpc.run(
            args.csci,
            args.egresses,
            args.ingresses,
            selection_rpc.Runs(args.rounds, args.seconds, args.restconf_workers),
        )
        ok = ok and server
    print("PASS" if ok else "FAIL (a target was missed)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
