"""The closed-loop check of ``catsctl evaluate``: is the simulator a fiction?

Run with ``python -m tools.closed_loop`` from the repository root. It replays a two-minute
slice of the shipped trace through a real bed (tools/closed_loop/bed.py: prefill-model service
instances behind SCIs, a C-SMA, the C-PS and an ingress forwarder) for two C-PS policies, and
simulates the same slice over the same topology (``bed-topology.json``) with the same two
policies:

- ``nearest``: the C-PS configured with hierarchical selection (the egress with the smallest
  network delay first, service-metrics-op 6.2.4), i.e. everything to the nearest site;
- ``cats``: the recommended LLM configuration, as the forwarder steering carries it
  (``cats-steer`` in the simulator: the Joint Selection recomputed on every table change).

It prints both policies' p50/p95 TTFT in the bed and in the simulator, and checks that the
ranking (by p50) is the same and that the p50 difference agrees within 20 %; it exits 1
otherwise. ``--figure`` writes the four CDFs. Timing on a shared machine varies; the tool
reports what it measured and does not retry.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from controller.evaluate import engine, policies, policyfile, shipped, topology, trace
from controller.evaluate.results import percentile
from tools.closed_loop import bed
from tools.closed_loop.replay import OK, Answer, replay

HERE = Path(__file__).parent
TOPOLOGY = HERE / "bed-topology.json"
NEAREST: dict[str, Any] = {
    f"{bed.SM}:selection-policy": {
        "service-policy": [{"cs-id": bed.SERVICE, "requirement": {"hierarchical-selection": True}}]
    }
}
TOLERANCE = 0.20
INTERVAL = 1.0  # the SCIs sample every second
PROCESSING = 0.5  # SCI report, C-SMA look, C-PS ingest and the steering push (s)
WARM_UP = 5.0


def _bed_run(
    name: str, policy: dict[str, Any], requests: Sequence[trace.Request], folder: Path
) -> list[Answer]:
    topo = topology.load(TOPOLOGY)
    ingress = topo.ingresses[0].region
    print(f"closed-loop: starting the bed for {name} ...", flush=True)
    with bed.start(folder / name, topo, policy) as running:

        def round_trip(csci_id: str) -> float:
            site = running.site_of(csci_id)
            return 0.0 if site is None else topo.rtt(ingress, site.region)

        print(f"closed-loop: replaying {len(requests)} requests for {name} ...", flush=True)
        return replay(running.ingress, requests, round_trip)


def _simulated(name: str, requests: Sequence[trace.Request]) -> list[float]:
    """The same slice simulated; it starts after WARM_UP seconds of reports, as the bed
    starts replaying once the C-PS has steered the ingress on its first reports."""
    topo = topology.load(TOPOLOGY)
    requests = [replace(r, arrival=r.arrival + WARM_UP) for r in requests]
    policy = policies.build("nearest" if name == "nearest" else "cats-steer", policyfile.load())
    settings = engine.RunSettings(interval=INTERVAL, processing=PROCESSING)
    return [o.ttft for o in engine.simulate(requests, topo, policy, settings).outcomes]


def _figure(curves: dict[str, list[float]], path: Path) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    figure, axes = plt.subplots(figsize=(8, 5))
    for label, values in curves.items():
        ordered = sorted(values)
        style = "-" if label.startswith("bed") else "--"
        shares = [(i + 1) / len(ordered) for i in range(len(ordered))]
        axes.plot(ordered, shares, style, label=label)
    axes.set_xscale("log")
    axes.set_xlabel("TTFT (s, log scale)")
    axes.set_ylabel("share of requests")
    axes.set_title("Closed loop: real processes (bed) against the simulator (sim)")
    axes.grid(visible=True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bed and the simulator for both policies; compare; exit 1 on disagreement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--start", type=float, default=300.0, help="slice start in the trace (s)")
    parser.add_argument("--length", type=float, default=120.0, help="slice length (s)")
    parser.add_argument("--folder", type=Path, help="keep state and logs here")
    parser.add_argument("--figure", type=Path, help="write the CDFs (PNG) here")
    parser.add_argument("--json", type=Path, help="write every TTFT (JSON) here")
    args = parser.parse_args(argv)
    requests = trace.window(trace.load(), args.start, args.length)
    folder = args.folder or Path(tempfile.mkdtemp(prefix="closed-loop-"))
    runs = {"nearest": NEAREST, "cats": json.loads(shipped.RECOMMENDED.read_text())}
    curves: dict[str, list[float]] = {}
    failed = 0
    for name, policy in runs.items():
        answers = _bed_run(name, policy, requests, folder)
        refused = Counter(f"{a.status} {a.error[:80]}" for a in answers if a.status != OK)
        for reason, count in refused.most_common(3):
            which = [a.request for a in answers if f"{a.status} {a.error[:80]}" == reason]
            print(f"closed-loop: {name}: {count} failed ({which[:8]}): {reason}", flush=True)
        failed += sum(refused.values())
        curves[f"bed {name}"] = [a.ttft for a in answers if a.status == OK]
        curves[f"sim {name}"] = _simulated(name, requests)
    if args.json:
        args.json.write_text(json.dumps(curves))
    if args.figure:
        _figure(curves, args.figure)
    p50 = {label: percentile(values, 50) for label, values in curves.items()}
    for label, values in curves.items():
        print(
            f"{label:<12} requests {len(values):4d}  p50 {p50[label]:7.3f} s  "
            f"p95 {percentile(values, 95):7.3f} s"
        )
    bed_gap = p50["bed nearest"] - p50["bed cats"]
    sim_gap = p50["sim nearest"] - p50["sim cats"]
    agree = abs(bed_gap - sim_gap) <= TOLERANCE * abs(sim_gap)
    same_rank = (bed_gap > 0) == (sim_gap > 0)
    print(
        f"p50 nearest - cats: bed {bed_gap:.3f} s, simulator {sim_gap:.3f} s "
        f"(ratio {bed_gap / sim_gap if sim_gap else float('nan'):.2f}); ranking "
        f"{'agrees' if same_rank else 'differs'}; failed requests {failed}; logs in {folder}"
    )
    if not (agree and same_rank) or failed:
        print("closed-loop: the bed and the simulator disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
