"""The figures of an evaluation (matplotlib, PNG, no display needed).

- ``ttft-cdf.png``: the TTFT distribution of every policy at the sweep's load level;
- ``p99-vs-load.png``: p99 TTFT of every policy at every load level;
- ``p99-vs-interval.png``: p99 TTFT against the reporting interval of the policies that
  decide on reports, with the others as flat references (they do not read reports).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from controller.evaluate.results import Summary
from controller.evaluate.runner import Matrix, Run, at_loads, by_interval

_STYLE = {
    "cats": ("tab:red", "-", 2.4),
    "cats-jsa": ("tab:orange", "--", 1.4),
    "oracle": ("black", ":", 1.6),
}


def _style(name: str) -> dict[str, object]:
    color, line, width = _STYLE.get(name, (None, "-", 1.1))
    style: dict[str, object] = {"linestyle": line, "linewidth": width, "label": name}
    if color:
        style["color"] = color
    return style


def cdf(runs: Sequence[Run], matrix: Matrix, path: Path) -> None:
    """TTFT CDF per policy at the sweep's load level and default interval."""
    figure, axes = plt.subplots(figsize=(8, 5))
    for run in runs:
        if not run.ttft:
            continue
        values = sorted(run.ttft)
        shares = [(i + 1) / len(values) for i in range(len(values))]
        axes.plot(values, shares, **_style(run.summary.policy))  # type: ignore[arg-type]
    axes.set_xscale("log")
    axes.set_xlabel("TTFT (s, log scale)")
    axes.set_ylabel("share of requests")
    axes.axvline(matrix.slo, color="grey", linewidth=0.8)
    axes.set_title(f"TTFT CDF at {matrix.sweep_load:.0%} load, {matrix.interval:g} s reports")
    axes.grid(visible=True, which="both", alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _by_policy(rows: Sequence[Summary]) -> dict[str, list[Summary]]:
    found: dict[str, list[Summary]] = {}
    for row in rows:
        found.setdefault(row.policy, []).append(row)
    return found


def p99_load(runs: Sequence[Run], matrix: Matrix, path: Path) -> None:
    """p99 TTFT against the load level."""
    figure, axes = plt.subplots(figsize=(8, 5))
    for name, rows in _by_policy(at_loads(runs, matrix)).items():
        rows.sort(key=lambda s: s.load)
        axes.plot([s.load * 100 for s in rows], [s.p99 for s in rows], marker="o", **_style(name))  # type: ignore[arg-type]
    axes.set_yscale("log")
    axes.set_xlabel("offered load (% of the prefill capacity)")
    axes.set_ylabel("p99 TTFT (s, log scale)")
    axes.set_title(f"p99 TTFT against load, {matrix.interval:g} s reports")
    axes.grid(visible=True, which="both", alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def p99_interval(runs: Sequence[Run], matrix: Matrix, path: Path) -> None:
    """p99 TTFT against the reporting interval at the sweep's load level."""
    figure, axes = plt.subplots(figsize=(8, 5))
    intervals = sorted(matrix.intervals)
    for name, rows in _by_policy(by_interval(runs, matrix)).items():
        rows.sort(key=lambda s: s.interval)
        if len(rows) > 1:
            xs, ys = [s.interval for s in rows], [s.p99 for s in rows]
            axes.plot(xs, ys, marker="o", **_style(name))  # type: ignore[arg-type]
        else:
            style = _style(name)
            style["linewidth"] = 0.9
            axes.plot([intervals[0], intervals[-1]], [rows[0].p99] * 2, **style)  # type: ignore[arg-type]
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("reporting interval (s, log scale)")
    axes.set_ylabel("p99 TTFT (s, log scale)")
    axes.set_title(f"p99 TTFT against the reporting interval at {matrix.sweep_load:.0%} load")
    axes.grid(visible=True, which="both", alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_all(runs: Sequence[Run], matrix: Matrix, directory: Path) -> list[Path]:
    """Every figure into ``directory``; their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [
        directory / "ttft-cdf.png",
        directory / "p99-vs-load.png",
        directory / "p99-vs-interval.png",
    ]
    cdf(runs, matrix, paths[0])
    p99_load(runs, matrix, paths[1])
    p99_interval(runs, matrix, paths[2])
    return paths
