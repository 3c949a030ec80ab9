"""The fast ``select``: the same decision as ``explain`` without visiting every candidate
(service-metrics-op 6.2.3 Steps 1-7 over the TST index).

Candidates come from :meth:`SelectionIndex.by_tst` in increasing TST and go through the same
screening (Steps 1-5 and the overrides) as in ``explain``. When the requirement ranks by TST
first (the default pure-TST objective, or minimize-latency as the first objective, or load
distribution), the winner is among the first feasible candidates: the walk collects the
candidates tied with the first feasible one (within the tolerance for load distribution) and
one runner-up, and ranks the ties with the same Step 6 code. Requirements that rank by other
metrics first, hierarchical selection, and every case that needs a fallback level run the
full :func:`explain` instead, so both always agree on the winner.

Plausibility penalties (section 9) are part of the score: they change nothing when an
objective or load distribution decides first (ties are ranked with the same scorer), but a
score-first requirement with a penalized CSCI-ID of the CS-ID runs :func:`explain`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from controller.selection.joint.algorithm import explain, selected
from controller.selection.joint.gate import Gate
from controller.selection.joint.index import SelectionIndex
from controller.selection.joint.outcome import CandidateReport, Outcome
from controller.selection.joint.overrides import prefer, preference_class, restrict, spread
from controller.selection.joint.ranking import Ranking, Scorer, normalize, rank
from controller.selection.joint.requirement import (
    PolicyOverride,
    Requirement,
    SelectionRequest,
    SelectionSettings,
)
from controller.selection.joint.screening import screen
from controller.selection.joint.vocabulary import DecidedBy, FallbackLevel, Metric, Objective
from controller.types import CsciId

Key = Callable[[int], float]


def primary_key(requirement: Requirement, *, penalized: bool = False) -> Key | None:
    """The monotone function of TST that orders Step 6 first, or None if TST does not.

    ``penalized``: some candidate carries a plausibility penalty, so the score alone is not
    a function of TST.
    """
    if requirement.hierarchical:
        return None
    if requirement.overrides.load_distribution is not None:
        return float
    weights = requirement.weights.by_metric()
    bounds = requirement.normalization
    if requirement.objectives:
        latency_first = requirement.objectives[0] is Objective.MINIMIZE_LATENCY
        others = [m for m in weights if m is not Metric.TOTAL_SERVICE_TIME]
        return float if latency_first and all(m in bounds for m in others) else None
    if set(weights) != {Metric.TOTAL_SERVICE_TIME} or requirement.soft or penalized:
        return None
    tst_bounds = bounds.get(Metric.TOTAL_SERVICE_TIME)
    return float if tst_bounds is None else lambda tst: normalize(tst, tst_bounds)


@dataclass(slots=True)
class _Class:
    """The best candidates of one preference class found so far."""

    limit: float
    members: list[CandidateReport] = field(default_factory=list)
    more: bool = False


def _screened(
    index: SelectionIndex, request: SelectionRequest, settings: SelectionSettings, csci: CsciId
) -> CandidateReport | None:
    entry = index.cst.get(request.cs_id, csci)
    if entry is None or entry.gas <= 0:
        return None
    path = index.nst.get(request.ingress, entry.egress) if entry.egress else None
    report = screen(entry, path, request.requirement.hard, request.now, settings)
    if report.feasible:
        report = restrict(report, request.requirement.overrides) or report
    return report if report.feasible else None


def _path_constrained(request: SelectionRequest, settings: SelectionSettings) -> bool:
    hard = request.requirement.hard
    limits = (hard.min_bandwidth, hard.max_jitter, hard.max_loss_rate)
    return settings.network_entry_lifetime is not None or any(v is not None for v in limits)


def _walk(
    index: SelectionIndex,
    request: SelectionRequest,
    settings: SelectionSettings,
    key: Key,
) -> tuple[dict[int, _Class], list[CandidateReport]]:
    """Visit candidates in TST order until the best class has its ties and a runner-up.

    Excluded candidates are reported while they could still have won (up to the ties of the
    best class found so far); past that, the search for a runner-up only tests feasibility.
    """
    requirement = request.requirement
    hard, overrides = requirement.hard, requirement.overrides
    load = overrides.load_distribution
    gate = Gate(requirement, request.now, settings)
    classes: dict[int, _Class] = {}
    examined: list[CandidateReport] = []
    horizon = math.inf
    usable = gate.path_usable if _path_constrained(request, settings) else None
    for tst, entry, path in index.by_tst(request.cs_id, request.ingress, usable):
        position = key(tst) if load is None else float(tst)
        if position <= horizon:
            report = screen(entry, path, hard, request.now, settings)
            report = (restrict(report, overrides) or report) if report.reason is None else report
            failed = report.reason is not None
            if failed:
                examined.append(report)
        else:
            failed = not gate.passes(entry, path)
        if failed:
            if hard.max_latency is not None and tst > hard.max_latency:
                break  # in TST order, every later candidate is over L_max too
            continue
        value = preference_class(entry, overrides)
        found = classes.get(value)
        if found is None:
            limit = position if load is None else position + load.tst_tolerance
            classes[value] = found = _Class(limit)
            horizon = min(horizon, limit)
        elif position > found.limit:
            found.more = True
            examined.append(CandidateReport(entry, path, tst))
            if value == 0:
                break
            continue
        report = CandidateReport(entry, path, tst)
        found.members.append(report)
        examined.append(report)
    return classes, examined


def select(
    index: SelectionIndex, request: SelectionRequest, settings: SelectionSettings
) -> Outcome:
    """The selected candidate and the candidates examined (``complete`` False).

    Falls back to :func:`explain` (``complete`` True) when the requirement does not rank by
    TST first or when no candidate is feasible (Fallback Levels 1-3).
    """
    requirement = request.requirement
    key = primary_key(requirement, penalized=any(request.penalties.values()))
    if key is None:
        return explain(index.cst, index.nst, request, settings)
    overrides = requirement.overrides
    pinned = None
    if requirement.session_affinity and request.affined is not None:
        pinned = _screened(index, request, settings, request.affined)
        if pinned is not None and preference_class(pinned.entry, overrides) == 0:
            ranking = Ranking((_ranked(pinned),), DecidedBy.AFFINITY)
            return selected(ranking, (), level=FallbackLevel.NONE, complete=False)
    classes, examined = _walk(index, request, settings, key)
    if not classes:
        return explain(index.cst, index.nst, request, settings)
    best = min(classes)
    state = classes[best]
    scorer = Scorer.over(requirement, state.members, request.penalties)
    seed, turn = settings.random_seed, request.turn
    if len(state.members) == 1:
        score, violated = scorer.score(state.members[0])
        only = state.members[0]
        only = CandidateReport(only.entry, only.path, only.tst, score, 1, violated)
        ranking = Ranking((only,), DecidedBy.ONLY_CANDIDATE)
    else:
        ranking = rank(state.members, requirement, scorer, seed=seed, turn=turn)
    if pinned is not None and preference_class(pinned.entry, overrides) == best:
        ranking = _first(ranking, pinned, DecidedBy.AFFINITY)
    elif overrides.load_distribution is not None:
        picked = spread(state.members, overrides.load_distribution, seed=seed, turn=turn)
        several = len(state.members) > 1 or state.more
        how = DecidedBy.LOAD_DISTRIBUTION if several else DecidedBy.ONLY_CANDIDATE
        ranking = _first(ranking, picked, how)
    elif len(state.members) == 1 and state.more:
        by_latency = bool(requirement.objectives)
        ranking = Ranking(
            ranking.ordered,
            DecidedBy.OBJECTIVE if by_latency else DecidedBy.SCORE,
            Objective.MINIMIZE_LATENCY if by_latency else None,
        )
    others = _scored(_others(ranking, examined, overrides), scorer, len(ranking.ordered))
    return selected(ranking, others, level=FallbackLevel.NONE, complete=False)


def _scored(others: list[CandidateReport], scorer: Scorer, ranked: int) -> list[CandidateReport]:
    """Feasible runners-up get their score (by the winner's scorer) and the next ranks, so
    every listed candidate has a score or an exclusion reason (6.2.3 Step 7)."""
    listed: list[CandidateReport] = []
    position = ranked
    for report in others:
        if report.reason is not None or report.score is not None:
            listed.append(report)
            continue
        position += 1
        score, violated = scorer.score(report)
        listed.append(
            CandidateReport(report.entry, report.path, report.tst, score, position, violated)
        )
    return listed


def _others(
    ranking: Ranking, examined: list[CandidateReport], overrides: PolicyOverride
) -> list[CandidateReport]:
    """The examined candidates not ranked; feasible ones of a worse preference class are
    excluded by the prefer-mode override that dropped them."""
    ranked = {r.csci_id for r in ranking.ordered}
    others = [r for r in examined if r.csci_id not in ranked]
    feasible = [r for r in others if r.reason is None]
    if not feasible:
        return others
    _, dropped = prefer([ranking.ordered[0], *feasible], overrides)
    moved = {r.csci_id for r in dropped}
    return [*(r for r in others if r.csci_id not in moved), *dropped]


def _ranked(
    report: CandidateReport, score: float | None = None, position: int | None = 1
) -> CandidateReport:
    return CandidateReport(
        report.entry, report.path, report.tst, score, position, report.violated_soft
    )


def _first(ranking: Ranking, chosen: CandidateReport, how: DecidedBy) -> Ranking:
    rest = [r for r in ranking.ordered if r.csci_id != chosen.csci_id]
    first = next((r for r in ranking.ordered if r.csci_id == chosen.csci_id), chosen)
    ordered = tuple(_ranked(r, r.score, i + 1) for i, r in enumerate([first, *rest]))
    return Ranking(ordered, how)
