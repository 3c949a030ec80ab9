"""The full Joint Selection Algorithm with its fallback levels: ``explain``
(service-metrics-op 6.2.3 Steps 1-7, 6.2.4, 6.2.5).

``explain`` evaluates every CST entry of the CS-ID and lists each one with its TST and either
its score and rank or its exclusion reason. Order: Steps 1-5, policy overrides, affinity,
hierarchical selection, then Step 6 (load distribution, or objectives, score, tie-breaks).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from controller.selection.joint.fallback import network_only, relax, relaxation_plan
from controller.selection.joint.outcome import CandidateReport, Outcome, RelaxationRecord
from controller.selection.joint.overrides import affined, hierarchical, prefer, restrict, spread
from controller.selection.joint.ranking import Ranking, Scorer, rank
from controller.selection.joint.requirement import (
    HardConstraints,
    SelectionRequest,
    SelectionSettings,
)
from controller.selection.joint.screening import screen
from controller.selection.joint.tables import ComputingServiceTable, CstEntry, NetworkServiceTable
from controller.selection.joint.vocabulary import (
    STEP1_REASONS,
    STEP3_REASONS,
    DecidedBy,
    FallbackLevel,
    ResultKind,
)
from controller.types import CsciId, ForwarderId


@dataclass(frozen=True, slots=True)
class Run:
    """One pass of the filters: the Candidate_Set entering Step 6 and the exclusions."""

    feasible: tuple[CandidateReport, ...]
    excluded: tuple[CandidateReport, ...]
    hierarchical_egress: ForwarderId | None = None


def run_filters(
    entries: Iterable[CstEntry],
    nst: NetworkServiceTable,
    request: SelectionRequest,
    hard: HardConstraints,
    settings: SelectionSettings,
) -> Run:
    """Steps 1-5, the policy overrides and hierarchical selection for one requirement."""
    requirement = request.requirement
    paths = nst.from_ingress(request.ingress)
    feasible: list[CandidateReport] = []
    excluded: list[CandidateReport] = []
    for entry in entries:
        path = paths.get(entry.egress) if entry.egress is not None else None
        report = screen(entry, path, hard, request.now, settings)
        if report.feasible:
            report = restrict(report, requirement.overrides) or report
        (feasible if report.feasible else excluded).append(report)
    feasible, dropped = prefer(feasible, requirement.overrides)
    excluded.extend(dropped)
    egress = None
    if requirement.hierarchical and affined(feasible, _affinity(request)) is None:
        egress, feasible, dropped = hierarchical(feasible)
        excluded.extend(dropped)
    return Run(tuple(feasible), tuple(excluded), egress)


def _affinity(request: SelectionRequest) -> CsciId | None:
    return request.affined if request.requirement.session_affinity else None


def step6(
    run: Run, request: SelectionRequest, settings: SelectionSettings
) -> tuple[Ranking, CandidateReport]:
    """Step 6 on a non-empty Candidate_Set: the ranking and the selected candidate."""
    requirement = request.requirement
    scorer = Scorer.over(requirement, run.feasible, request.penalties)
    seed = settings.random_seed
    ranking = rank(run.feasible, requirement, scorer, seed=seed, turn=request.turn)
    pinned = affined(ranking.ordered, _affinity(request))
    if pinned is not None:
        return _promote(ranking, pinned, DecidedBy.AFFINITY), pinned
    load = requirement.overrides.load_distribution
    if load is not None and len(ranking.ordered) > 1:
        picked = spread(ranking.ordered, load, seed=seed, turn=request.turn)
        return _promote(ranking, picked, DecidedBy.LOAD_DISTRIBUTION), picked
    return ranking, ranking.ordered[0]


def _promote(ranking: Ranking, chosen: CandidateReport, how: DecidedBy) -> Ranking:
    """Put the candidate chosen by affinity or load distribution at rank 1."""
    rest = [r for r in ranking.ordered if r.csci_id != chosen.csci_id]
    ordered = tuple(
        CandidateReport(r.entry, r.path, r.tst, r.score, i + 1, r.violated_soft)
        for i, r in enumerate([chosen, *rest])
    )
    return Ranking(ordered, how, from_candidates=ranking.from_candidates)


def selected(
    ranking: Ranking,
    others: Iterable[CandidateReport],
    *,
    level: FallbackLevel,
    complete: bool,
) -> Outcome:
    """The outcome of a selection that produced a CSCI-ID (Step 7)."""
    winner = ranking.ordered[0]
    assert winner.path is not None
    assert winner.tst is not None
    return Outcome(
        ResultKind.SELECTED,
        level,
        (*ranking.ordered, *others),
        complete=complete,
        csci_id=winner.csci_id,
        egress=winner.path.egress,
        computing_time=winner.entry.computing_time,
        network_delay=winner.path.network_delay,
        tst=winner.tst,
        decided_by=ranking.decided_by,
        deciding_objective=ranking.deciding_objective,
        deciding_tie_break=ranking.deciding_tie_break,
        normalization_from_candidates=ranking.from_candidates,
        estimated=winner.entry.estimated,
    )


def explain(
    cst: ComputingServiceTable,
    nst: NetworkServiceTable,
    request: SelectionRequest,
    settings: SelectionSettings,
) -> Outcome:
    """Run the Joint Selection Algorithm and, when needed, Fallback Levels 1-3 (6.2.5)."""
    entries = list(cst.service(request.cs_id).values())
    hard = request.requirement.hard
    run = run_filters(entries, nst, request, hard, settings)
    relaxations: list[RelaxationRecord] = []
    if not run.feasible and settings.fallback.relax_constraints:
        for round_, spec in relaxation_plan(settings):
            step = relax(hard, spec, position=len(relaxations) + 1, round_=round_)
            if step is None:
                continue
            hard, record = step
            relaxations.append(record)
            run = run_filters(entries, nst, request, hard, settings)
            if run.feasible:
                break
    applied = tuple(relaxations)
    if run.feasible:
        ranking, _ = step6(run, request, settings)
        level = FallbackLevel.RELAX_CONSTRAINTS if applied else FallbackLevel.NONE
        outcome = selected(ranking, run.excluded, level=level, complete=True)
        return replace(outcome, hierarchical_egress=run.hierarchical_egress, relaxations=applied)
    outcome = unresolved(entries, run.excluded, nst, request, settings)
    if applied and outcome.fallback_level is FallbackLevel.NONE:
        outcome = replace(outcome, fallback_level=FallbackLevel.RELAX_CONSTRAINTS)
    return replace(outcome, relaxations=applied)


def unresolved(
    entries: list[CstEntry],
    excluded: tuple[CandidateReport, ...],
    nst: NetworkServiceTable,
    request: SelectionRequest,
    settings: SelectionSettings,
) -> Outcome:
    """Fallback Levels 2 and 3, or 'service-unavailable', for an empty Candidate_Set."""
    policy = settings.fallback
    no_computing = all(r.reason in STEP1_REASONS for r in excluded)
    # No network path: no candidate got past Step 3 and at least one was stopped there.
    no_path = all(r.tst is None for r in excluded) and any(
        r.reason in STEP3_REASONS for r in excluded
    )
    if no_computing:
        egresses = [e.egress for e in entries if e.egress is not None]
        egresses.extend(request.fallback_egresses)
        path = network_only(nst, request.ingress, egresses, request.now, settings)
        no_path = path is None
        if path is not None and policy.network_only:
            return Outcome(
                ResultKind.EGRESS_ONLY,
                FallbackLevel.NETWORK_ONLY,
                excluded,
                complete=True,
                egress=path.egress,
                network_delay=path.network_delay,
            )
    if no_path and policy.default_route:
        return Outcome(
            ResultKind.DEFAULT_ROUTE,
            FallbackLevel.DEFAULT_ROUTE,
            excluded,
            complete=True,
        )
    return Outcome(ResultKind.SERVICE_UNAVAILABLE, FallbackLevel.NONE, excluded, complete=True)
