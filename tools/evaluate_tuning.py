"""The tuning of the C-PS's policy configuration for LLM services, step by step.

Run with ``python -m tools.evaluate_tuning`` from the repository root. Each step is a C-PS
configuration (YANG instance data, the same form as
``controller/evaluate/data/cats-llm-policy.json``); each is run as ``cats`` (and the
service-metrics steps as ``cats-jsa``) on the shipped trace and topology at 70 % and 90 % load
with 1 s reports, and at 70 % with 10 s reports, and the figures are printed. The simulator,
the trace and the topology are never changed: only the policy configuration is. The last step
is the shipped recommendation (docs/evaluation.md, "Tuning").
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from controller.evaluate import engine, policies, policyfile, results, topology, trace

SM = "ietf-cats-service-metrics"
UC = f"{SM}:update-control"
SP = f"{SM}:selection-policy"
AS = "ietf-cats-agent-selection:agent-selection"

STEPS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("shipped defaults", "cats", {}),
    ("+ dispatch accounting", "cats", {UC: {"dispatch-accounting": {"enabled": True}}}),
    (
        "+ delta thresholds 1 slot / 1 % / 5 %",
        "cats",
        {
            UC: {
                "dispatch-accounting": {"enabled": True},
                "delta-threshold": {
                    "gas-absolute": 1,
                    "gas-relative": "1",
                    "computing-time-relative": "5",
                },
            }
        },
    ),
    (
        "+ delta thresholds 0 (every change)",
        "cats",
        {
            UC: {
                "dispatch-accounting": {"enabled": True},
                "delta-threshold": {
                    "gas-absolute": 0,
                    "gas-relative": "0",
                    "computing-time-relative": "0",
                },
            }
        },
    ),
    (
        "  with look-ahead-horizon 2 (worse: not kept)",
        "cats",
        {
            UC: {
                "dispatch-accounting": {"enabled": True},
                "delta-threshold": {
                    "gas-absolute": 0,
                    "gas-relative": "0",
                    "computing-time-relative": "0",
                },
            },
            AS: {"selection-context": {"look-ahead-horizon": 2}},
        },
    ),
    (
        "  with stability min-improvement 50 ms (no gain: not kept)",
        "cats",
        {
            UC: {
                "dispatch-accounting": {"enabled": True},
                "delta-threshold": {
                    "gas-absolute": 0,
                    "gas-relative": "0",
                    "computing-time-relative": "0",
                },
            },
            AS: {"selection-context": {"stability": {"min-improvement": "0.05"}}},
        },
    ),
    ("joint selection alone, shipped defaults", "cats-jsa", {}),
    (
        "joint selection alone, accounting 1,100 ms per selection",
        "cats-jsa",
        {
            UC: {
                "dispatch-accounting": {
                    "enabled": True,
                    "computing-time-per-selection": "1100",
                },
                "delta-threshold": {
                    "gas-absolute": 0,
                    "gas-relative": "0",
                    "computing-time-relative": "0",
                },
            }
        },
    ),
    ("recommended (cats-llm-policy.json)", "cats", {"recommended": True}),
    ("recommended (cats-llm-policy.json)", "cats-jsa", {"recommended": True}),
)
RUNS = ((0.7, 1.0), (0.9, 1.0), (0.7, 10.0))


def _policy(step: dict[str, Any]) -> policyfile.CpsPolicy:
    if step.get("recommended"):
        return policyfile.load()
    return policyfile.parse(step)


def _run(args: tuple[int, float, float]) -> tuple[int, results.Summary]:
    index, load, interval = args
    _, name, document = STEPS[index]
    topo = topology.load()
    requests = trace.at_load(trace.load(), load, topo.capacity)
    policy = policies.build(name, _policy(document))
    result = engine.simulate(requests, topo, policy, engine.RunSettings(interval=interval))
    return index, results.summarize(result, load, interval, 2.0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run every step (``--steps`` picks some by number) and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", help="comma-separated step numbers (default: all)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--show", action="store_true", help="print each step's document")
    args = parser.parse_args(argv)
    chosen: list[int] = list(range(len(STEPS)))
    if args.steps:
        chosen = [int(n) for n in args.steps.split(",")]
    jobs = [(i, load, interval) for i in chosen for load, interval in RUNS]
    print(f"{'step':<58} {'policy':<9} run        p50     p95     p99    mean")
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for index, s in pool.map(_run, jobs):
            label, name, document = STEPS[index]
            run = f"{s.load:.0%}/{s.interval:g}s"
            print(
                f"{index:>2} {label:<55} {name:<9} {run:<8} {s.p50:7.3f} {s.p95:7.3f} "
                f"{s.p99:7.3f} {s.mean:7.3f}",
                flush=True,
            )
            if args.show and s.load == RUNS[0][0] and s.interval == RUNS[0][1]:
                print(json.dumps(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
