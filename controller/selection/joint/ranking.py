"""Step 6 of the Joint Selection Algorithm: objectives, score, tie-breaks (service-metrics-op
6.2.3 Step 6 and 6.2.4 Weighted Objective Function).

The order is lexicographic: the explicit objectives in list order, then the score (weighted
objective plus soft-constraint penalties, lower first), then the tie-break rules in list order.
The random rule draws from a generator seeded by (seed, turn, CSCI-ID), so a draw does not
depend on which other candidates are ranked: the fast path and the full explain agree.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from controller.selection.joint.outcome import CandidateReport
from controller.selection.joint.requirement import Bounds, Requirement
from controller.selection.joint.vocabulary import (
    DEFAULT_TIE_BREAKS,
    HIGHER_IS_BETTER,
    OBJECTIVE_METRIC,
    DecidedBy,
    Metric,
    Objective,
    TieBreak,
)
from controller.types import CsciId

_WORST = math.inf
_DRAW_BITS = 64


def _network(report: CandidateReport, field: str) -> float | None:
    return None if report.path is None else getattr(report.path, field)


_VALUES: dict[Metric, Callable[[CandidateReport], float | None]] = {
    Metric.GAS: lambda r: r.entry.gas,
    Metric.COMPUTING_TIME: lambda r: r.entry.computing_time,
    Metric.PRICE: lambda r: r.entry.price,
    Metric.REPUTATION: lambda r: r.entry.reputation,
    Metric.SECURITY_LEVEL: lambda r: r.entry.security_level,
    Metric.TOTAL_SERVICE_TIME: lambda r: r.tst,
    Metric.NETWORK_DELAY: lambda r: _network(r, "network_delay"),
    Metric.JITTER: lambda r: _network(r, "jitter"),
    Metric.BANDWIDTH: lambda r: _network(r, "bandwidth"),
    Metric.LOSS_RATE: lambda r: _network(r, "loss_rate"),
}


def metric_value(report: CandidateReport, metric: Metric) -> float | None:
    """The value of one metric of a candidate in its unit (times in microseconds)."""
    return _VALUES[metric](report)


def normalize(value: float, bounds: Bounds) -> float:
    """Min-max normalization n(x) to [0, 1], clamped; 0.5 when max = min (6.2.4)."""
    if bounds.high == bounds.low:
        return 0.5
    ratio = (value - bounds.low) / (bounds.high - bounds.low)
    return min(1.0, max(0.0, ratio))


def draw(seed: int, turn: int, label: str) -> int:
    """A reproducible 64-bit random draw keyed by (seed, turn, label)."""
    digest = hashlib.blake2b(f"{seed}:{turn}:{label}".encode(), digest_size=_DRAW_BITS // 8)
    return int.from_bytes(digest.digest(), "big")


@dataclass(frozen=True, slots=True)
class Scorer:
    """The weighted objective of 6.2.4 plus soft-constraint penalties, with fixed bounds,
    plus the per-entry plausibility penalties of section 9."""

    requirement: Requirement
    bounds: dict[Metric, Bounds]
    from_candidates: bool
    weights: dict[Metric, float]
    penalties: Mapping[CsciId, float] = field(default_factory=dict)

    @classmethod
    def over(
        cls,
        requirement: Requirement,
        feasible: Sequence[CandidateReport],
        penalties: Mapping[CsciId, float] | None = None,
    ) -> Scorer:
        """Bounds as configured; a weighted metric without bounds takes the set's min/max."""
        bounds = dict(requirement.normalization)
        missing = [m for m in requirement.weights.by_metric() if m not in bounds]
        for metric in missing:
            known = [v for r in feasible if (v := metric_value(r, metric)) is not None]
            bounds[metric] = Bounds(min(known), max(known)) if known else Bounds(0.0, 0.0)
        weights = requirement.weights.by_metric()
        return cls(requirement, bounds, bool(missing), weights, penalties or {})

    def score(self, report: CandidateReport) -> tuple[float, tuple[Metric, ...]]:
        """Score_i and the metrics of the soft constraints the candidate violated."""
        total = 0.0
        for metric, weight in self.weights.items():
            value = metric_value(report, metric)
            if value is None:
                term = 1.0
            else:
                term = normalize(value, self.bounds[metric])
                if metric in HIGHER_IS_BETTER:
                    term = 1.0 - term
            total += weight * term
        violated: list[Metric] = []
        for soft in self.requirement.soft:
            value = metric_value(report, soft.metric)
            if value is None or (
                value < soft.threshold
                if soft.metric in HIGHER_IS_BETTER
                else value > soft.threshold
            ):
                violated.append(soft.metric)
                total += soft.penalty
        return total + self.penalties.get(report.csci_id, 0.0), tuple(violated)


def _objective_key(report: CandidateReport, objective: Objective) -> float:
    metric = OBJECTIVE_METRIC[objective]
    value = metric_value(report, metric)
    if value is None:
        return _WORST
    return -value if metric in HIGHER_IS_BETTER else value


def _tie_key(report: CandidateReport, rule: TieBreak) -> float:
    entry = report.entry
    if rule is TieBreak.HIGHEST_GAS:
        return -entry.gas
    if rule is TieBreak.LOWEST_PRICE:
        return _WORST if entry.price is None else entry.price
    return _WORST if entry.reputation is None else -entry.reputation


def tie_breaks(requirement: Requirement) -> tuple[tuple[TieBreak, ...], bool]:
    """The deterministic rules in force (up to 'random') and whether 'random' follows."""
    rules = requirement.tie_breaks or DEFAULT_TIE_BREAKS
    if TieBreak.RANDOM in rules:
        return rules[: rules.index(TieBreak.RANDOM)], True
    return rules, False


@dataclass(frozen=True, slots=True)
class Ranking:
    """Feasible candidates in final order with their scores, and what decided the winner."""

    ordered: tuple[CandidateReport, ...]
    decided_by: DecidedBy
    deciding_objective: Objective | None = None
    deciding_tie_break: TieBreak | None = None
    from_candidates: bool = False


def rank(
    feasible: Sequence[CandidateReport],
    requirement: Requirement,
    scorer: Scorer,
    *,
    seed: int,
    turn: int,
) -> Ranking:
    """Order the Candidate_Set by objectives, score and tie-breaks (6.2.3 Step 6)."""
    rules, random_last = tie_breaks(requirement)
    keyed: list[tuple[tuple[float, ...], CandidateReport]] = []
    for report in feasible:
        score, violated = scorer.score(report)
        scored = _scored(report, score, violated)
        key = (
            *(_objective_key(scored, o) for o in requirement.objectives),
            score,
            *(_tie_key(scored, rule) for rule in rules),
        )
        keyed.append((key, scored))
    keyed.sort(key=lambda pair: (pair[0], pair[1].csci_id))
    if random_last:
        keyed = _shuffle_ties(keyed, seed, turn)
    ordered = tuple(_scored(r, r.score, r.violated_soft, i + 1) for i, (_, r) in enumerate(keyed))
    decided = _decided(keyed, requirement, rules, random_last=random_last)
    return Ranking(ordered, *decided, from_candidates=scorer.from_candidates)


def _scored(
    report: CandidateReport,
    score: float | None,
    violated: tuple[Metric, ...],
    position: int | None = None,
) -> CandidateReport:
    return CandidateReport(report.entry, report.path, report.tst, score, position, violated)


def _shuffle_ties(
    keyed: list[tuple[tuple[float, ...], CandidateReport]], seed: int, turn: int
) -> list[tuple[tuple[float, ...], CandidateReport]]:
    """Order each group of equal keys by the seeded draw ('random' tie-break)."""
    result: list[tuple[tuple[float, ...], CandidateReport]] = []
    start = 0
    while start < len(keyed):
        end = start + 1
        while end < len(keyed) and keyed[end][0] == keyed[start][0]:
            end += 1
        group = keyed[start:end]
        if len(group) > 1:
            group.sort(key=lambda pair: draw(seed, turn, pair[1].csci_id))
        result.extend(group)
        start = end
    return result


def _decided(
    keyed: Sequence[tuple[tuple[float, ...], CandidateReport]],
    requirement: Requirement,
    rules: tuple[TieBreak, ...],
    *,
    random_last: bool,
) -> tuple[DecidedBy, Objective | None, TieBreak | None]:
    """The first key component on which the winner beats the runner-up."""
    if len(keyed) == 1:
        return DecidedBy.ONLY_CANDIDATE, None, None
    best, second = keyed[0][0], keyed[1][0]
    objectives = len(requirement.objectives)
    for index, (a, b) in enumerate(zip(best, second, strict=True)):
        if a == b:
            continue
        if index < objectives:
            return DecidedBy.OBJECTIVE, requirement.objectives[index], None
        if index == objectives:
            return DecidedBy.SCORE, None, None
        return DecidedBy.TIE_BREAK, None, rules[index - objectives - 1]
    return DecidedBy.TIE_BREAK, None, TieBreak.RANDOM if random_last else None
