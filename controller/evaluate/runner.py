"""The matrix of an evaluation: every policy at every load level, and the report-path
policies at every reporting interval, run in parallel worker processes.

A run is a pure function of (trace, topology, policy configuration, policy name, load,
interval): workers read the files once, then simulate the runs they are given.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from controller.evaluate import policyfile, shipped, topology, trace
from controller.evaluate.engine import RunSettings, simulate
from controller.evaluate.policies import NAMES, REPORTED, build
from controller.evaluate.results import Summary, summarize
from controller.evaluate.topology import Topology
from controller.evaluate.trace import Request


@dataclass(frozen=True, slots=True)
class Matrix:
    """What to run; the files are read by every worker."""

    trace: Path = shipped.DEFAULT_TRACE
    topology: Path = shipped.DEFAULT_TOPOLOGY
    policy: Path | None = None
    policies: tuple[str, ...] = NAMES
    loads: tuple[float, ...] = (0.5, 0.7, 0.9)
    interval: float = 1.0
    intervals: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0, 10.0)
    sweep_load: float = 0.7
    slo: float = 2.0
    seed: int = 1

    def runs(self) -> list[tuple[str, float, float]]:
        """(policy, load, interval) of every run, the longest first."""
        runs = [(name, load, self.interval) for load in self.loads for name in self.policies]
        for interval in self.intervals:
            if interval == self.interval and self.sweep_load in self.loads:
                continue
            runs.extend(
                (name, self.sweep_load, interval) for name in REPORTED if name in self.policies
            )
        return sorted(runs, key=lambda r: (r[0] != "cats", r[0] != "llm-d", -r[1], r[2]))


@dataclass(frozen=True, slots=True)
class Run:
    """One run's row and, for the CDF, its TTFTs."""

    summary: Summary
    ttft: tuple[float, ...] = field(default=())


_Inputs = tuple[tuple[Request, ...], Topology, policyfile.CpsPolicy]
_LOADED: dict[tuple[Path, Path, Path | None], _Inputs] = {}


def _inputs(matrix: Matrix) -> _Inputs:
    key = (matrix.trace, matrix.topology, matrix.policy)
    if key not in _LOADED:
        cps = policyfile.load(matrix.policy) if matrix.policy else policyfile.load()
        _LOADED[key] = (trace.load(matrix.trace), topology.load(matrix.topology), cps)
    return _LOADED[key]


def run_one(matrix: Matrix, name: str, load: float, interval: float) -> Run:
    """Simulate one policy at one load level and reporting interval."""
    requests, topo, cps = _inputs(matrix)
    scaled = trace.at_load(requests, load, topo.capacity)
    settings = RunSettings(interval=interval, seed=matrix.seed)
    result = simulate(scaled, topo, build(name, cps), settings)
    summary = summarize(result, load, interval, matrix.slo)
    keep = load == matrix.sweep_load and interval == matrix.interval
    return Run(summary, tuple(o.ttft for o in result.outcomes) if keep else ())


def _job(args: tuple[Matrix, str, float, float]) -> Run:
    return run_one(*args)


def evaluate(
    matrix: Matrix, jobs: int | None = None, progress: Callable[[Run], None] | None = None
) -> list[Run]:
    """Every run of the matrix (``jobs`` worker processes; default: the CPUs, at most 2)."""
    runs = matrix.runs()
    workers = jobs or min(2, os.cpu_count() or 1)
    done: list[Run] = []
    if workers <= 1:
        for name, load, interval in runs:
            done.append(run_one(matrix, name, load, interval))
            if progress:
                progress(done[-1])
        return done
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for result in pool.map(_job, [(matrix, *r) for r in runs]):
            done.append(result)
            if progress:
                progress(result)
    return done


def by_interval(runs: Sequence[Run], matrix: Matrix) -> list[Summary]:
    """The rows of the reporting-interval sweep (at the sweep's load level)."""
    return [r.summary for r in runs if r.summary.load == matrix.sweep_load]


def at_loads(runs: Sequence[Run], matrix: Matrix) -> list[Summary]:
    """The rows of the load levels (at the default reporting interval)."""
    order = {name: i for i, name in enumerate(matrix.policies)}
    rows = [r.summary for r in runs if r.summary.interval == matrix.interval]
    return sorted(rows, key=lambda s: (s.load, order.get(s.policy, 99)))
