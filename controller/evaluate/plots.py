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
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from controller.evaluate.results import Summary
from controller.evaluate.runner import Matrix, Run, at_loads, by_interval

# One colour per policy, the same in every figure; the C-PS's policies and the oracle stand out.
_STYLE: dict[str, tuple[str, str, float]] = {
    "nearest": ("tab:blue", "-", 1.1),
    "round-robin": ("tab:olive", "-", 1.1),
    "least-loaded": ("tab:brown", "-", 1.1),
    "sglang": ("tab:purple", "-", 1.1),
    "llm-d": ("tab:cyan", "-", 1.1),
    "dynamo": ("tab:pink", "-", 1.1),
    "gorgo": ("tab:green", "-", 1.1),
    "cats-jsa": ("tab:orange", "--", 1.4),
    "cats": ("tab:red", "-", 2.4),
    "cats-steer": ("tab:gray", "--", 1.4),
    "oracle": ("black", ":", 1.6),
}
ZOOM_S = 6.0  # the zoomed panels show the policies whose p99 stays below this


def _style(name: str) -> dict[str, object]:
    color, line, width = _STYLE.get(name, ("tab:gray", "-", 1.1))
    return {"linestyle": line, "linewidth": width, "label": name, "color": color}


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


def _panels(title: str) -> tuple[Figure, Axes, Axes]:
    figure, (whole, zoom) = plt.subplots(1, 2, figsize=(12, 5))
    figure.suptitle(title)
    return figure, whole, zoom


def _finish(figure: Figure, whole: Axes, zoom: Axes, xlabel: str, path: Path) -> None:
    whole.set_yscale("log")
    whole.set_ylabel("p99 TTFT (s, log scale)")
    whole.set_title("every policy")
    zoom.set_ylabel("p99 TTFT (s)")
    zoom.set_title(f"the policies below {ZOOM_S:g} s")
    for axes in (whole, zoom):
        axes.set_xlabel(xlabel)
        axes.grid(visible=True, which="both", alpha=0.3)
        axes.legend(fontsize=8, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def p99_load(runs: Sequence[Run], matrix: Matrix, path: Path) -> None:
    """p99 TTFT against the load level: every policy, and a zoom on the best."""
    figure, whole, zoom = _panels(f"p99 TTFT against load, {matrix.interval:g} s reports")
    for name, rows in _by_policy(at_loads(runs, matrix)).items():
        rows.sort(key=lambda s: s.load)
        xs, ys = [s.load * 100 for s in rows], [s.p99 for s in rows]
        for axes in (whole, zoom) if max(ys) < ZOOM_S else (whole,):
            axes.plot(xs, ys, marker="o", **_style(name))  # type: ignore[arg-type]
    _finish(figure, whole, zoom, "offered load (% of the prefill capacity)", path)


def p99_interval(runs: Sequence[Run], matrix: Matrix, path: Path) -> None:
    """p99 TTFT against the reporting interval at the sweep's load level; the policies that
    read no reports are flat references."""
    figure, whole, zoom = _panels(
        f"p99 TTFT against the reporting interval at {matrix.sweep_load:.0%} load"
    )
    intervals = sorted(matrix.intervals)
    for name, rows in _by_policy(by_interval(runs, matrix)).items():
        rows.sort(key=lambda s: s.interval)
        style = _style(name)
        if len(rows) > 1:
            xs, ys = [s.interval for s in rows], [s.p99 for s in rows]
            style["marker"] = "o"
        else:
            xs, ys = [intervals[0], intervals[-1]], [rows[0].p99] * 2
            style["linewidth"] = 0.9
            style["label"] = f"{name} (reads no reports)"
        for axes in (whole, zoom) if max(ys) < ZOOM_S else (whole,):
            axes.plot(xs, ys, **style)  # type: ignore[arg-type]
    for axes in (whole, zoom):
        axes.set_xscale("log")
    _finish(figure, whole, zoom, "reporting interval (s, log scale)", path)


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
