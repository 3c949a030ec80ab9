"""Figures of a run and the table of an evaluation (times in seconds, shares in percent).

- TTFT percentiles with linear interpolation between order statistics;
- SLO attainment: the share of requests whose TTFT is within the bound;
- cache hit ratio: prompt tokens served from a cache over all prompt tokens;
- cross-region share: requests served outside their ingress's region;
- estimated/stale: decisions whose chosen candidate's values were estimates (the selection
  code said so: a C-SMA's first advertisement, or the C-PS's own dispatch accounting since the
  last report) or stale (older than their freshness bound, three reporting intervals and a
  second, :func:`controller.evaluate.reporting.freshness`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from controller.evaluate.engine import RunResult


def percentile(values: Sequence[float], rank: float) -> float:
    """The ``rank`` percentile of ``values`` (linear interpolation; nan when empty)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * rank / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True, slots=True)
class Summary:
    """One row of the table: a policy at a load level and reporting interval."""

    policy: str
    load: float
    interval: float
    requests: int
    p50: float
    p95: float
    p99: float
    mean: float
    slo: float
    hit: float
    cross_region: float
    estimated_or_stale: float
    suppressed: float

    def as_json(self) -> dict[str, float | str | int]:
        """The row as JSON members (percent shares, seconds)."""
        return {
            "policy": self.policy,
            "load-percent": round(self.load * 100),
            "reporting-interval-s": self.interval,
            "requests": self.requests,
            "ttft-p50-s": round(self.p50, 4),
            "ttft-p95-s": round(self.p95, 4),
            "ttft-p99-s": round(self.p99, 4),
            "ttft-mean-s": round(self.mean, 4),
            "slo-attainment-percent": round(self.slo, 2),
            "cache-hit-percent": round(self.hit, 2),
            "cross-region-percent": round(self.cross_region, 2),
            "estimated-or-stale-percent": round(self.estimated_or_stale, 2),
        }


def summarize(result: RunResult, load: float, interval: float, slo: float) -> Summary:
    """The figures of one run."""
    outcomes = result.outcomes
    ttft = [o.ttft for o in outcomes]
    count = max(1, len(outcomes))
    tokens = sum(o.input_tokens for o in outcomes) or 1
    offered = result.samples_offered or 1
    return Summary(
        result.policy,
        load,
        interval,
        len(outcomes),
        percentile(ttft, 50),
        percentile(ttft, 95),
        percentile(ttft, 99),
        sum(ttft) / count,
        100.0 * sum(t <= slo for t in ttft) / count,
        100.0 * sum(o.cached_tokens for o in outcomes) / tokens,
        100.0 * sum(o.cross_region for o in outcomes) / count,
        100.0 * sum(o.estimated or o.stale for o in outcomes) / count,
        100.0 * result.samples_suppressed / offered,
    )


HEADER = (
    f"{'policy':<14} {'load':>4} {'p50 s':>7} {'p95 s':>7} {'p99 s':>7} "
    f"{'SLO %':>6} {'hit %':>6} {'xreg %':>6} {'est/stale %':>11}"
)


def row(summary: Summary) -> str:
    """One aligned line of the table."""
    return (
        f"{summary.policy:<14} {summary.load * 100:>3.0f}% {summary.p50:>7.3f} "
        f"{summary.p95:>7.3f} {summary.p99:>7.3f} {summary.slo:>6.1f} {summary.hit:>6.1f} "
        f"{summary.cross_region:>6.1f} {summary.estimated_or_stale:>11.1f}"
    )


def table(summaries: Sequence[Summary]) -> str:
    """The table of the load levels, grouped by load."""
    lines = [HEADER]
    for load in sorted({s.load for s in summaries}):
        lines.extend(row(s) for s in summaries if s.load == load)
    return "\n".join(lines)


def markdown(summaries: Sequence[Summary], slo: float) -> str:
    """The same table in Markdown, for docs/evaluation.md."""
    lines = [
        f"| load | policy | p50 TTFT s | p95 TTFT s | p99 TTFT s | TTFT <= {slo:g} s % "
        "| cache hit % | cross-region % | estimated or stale % |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in sorted(summaries, key=lambda s: s.load):
        lines.append(
            f"| {s.load * 100:.0f} % | {s.policy} | {s.p50:.3f} | {s.p95:.3f} | {s.p99:.3f} "
            f"| {s.slo:.1f} | {s.hit:.1f} | {s.cross_region:.1f} | {s.estimated_or_stale:.1f} |"
        )
    return "\n".join(lines)
