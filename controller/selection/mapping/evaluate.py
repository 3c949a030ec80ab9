"""evaluate: MSG-8 in, MSG-9 out; P4 to P7 for one step over N candidates (8.1, 8.4, 9.1).

Constraints filter first (P4), every eligible candidate is valued per dimension (P5),
combined (P6) and the change is judged against the stability rules (P7). When no candidate
is eligible the fallback ladder of 8.4 runs in order. The result names every candidate with
its valuation or its exclusion reasons. Pure: time and every input are passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from controller.selection.mapping.combination import Scored, combine, rank
from controller.selection.mapping.context import Occasion, Policy, SessionPosition
from controller.selection.mapping.descriptor import Descriptor
from controller.selection.mapping.findings import Effect, Exclusion, QualifiedValue
from controller.selection.mapping.memo import Combined, Screenings
from controller.selection.mapping.points import decision_point
from controller.selection.mapping.prepared import Prepared, prepare
from controller.selection.mapping.record import CandidateResult, Evaluation
from controller.selection.mapping.scan import Scans
from controller.selection.mapping.screening import screen
from controller.selection.mapping.stability import judge
from controller.selection.mapping.storage import held_somewhere
from controller.selection.mapping.tail import degrade, failure
from controller.selection.mapping.valuation import Valuation, measure, value
from controller.selection.mapping.view import Candidate
from controller.selection.mapping.vocabulary import (
    CONDITION_REASON,
    DecisionPoint,
    DegradationClass,
    FallbackRung,
    Role,
    Trigger,
)
from controller.selection.units import Timestamp
from controller.types import CsciId

_CONDITIONS = {reason: condition for condition, reason in CONDITION_REASON.items()}


@dataclass(frozen=True, slots=True)
class EvaluationRequest:
    """MSG-8: the descriptor (with the attribution it carries), what the C-PS knows of the
    session, the trigger and the decision point (derived from the trigger when absent; no
    trigger is session admission, DP1)."""

    descriptor: Descriptor
    position: SessionPosition = field(default_factory=SessionPosition)
    trigger: Trigger | None = None
    decision_point: DecisionPoint | None = None

    @property
    def point(self) -> DecisionPoint:
        """The decision point of the request."""
        return self.decision_point or decision_point(self.trigger)


Screened = tuple[list[tuple[Candidate, tuple[Exclusion, ...]]], list[Valuation]]


def _screen_all(
    prepared: Prepared,
    candidates: Sequence[Candidate],
    now: Timestamp,
    scans: Scans,
    kept: Screenings | None = None,
) -> Screened:
    """P4 then P5 for every candidate: exclusions per candidate, valuations of the eligible;
    a result ``kept`` from an earlier decision is taken where it still holds exactly."""
    screened: list[tuple[Candidate, tuple[Exclusion, ...]]] = []
    eligible: list[Valuation] = []
    if kept is not None:
        kept.start(prepared, candidates)
    for candidate in candidates:
        if kept is not None:
            found = kept.get(candidate, now)
            if found is not None:
                screened.append((candidate, found.exclusions))
                if found.valuation is not None:
                    eligible.append(found.valuation)
                continue
        measures = measure(candidate, prepared, now, scans)
        exclusions, estimates = screen(candidate, prepared, measures)
        valuation = None
        if exclusions:
            screened.append((candidate, tuple(exclusions)))
        else:
            screened.append((candidate, ()))
            valuation = value(candidate, measures, estimates)
            eligible.append(valuation)
        if kept is not None:
            kept.keep(candidate, screened[-1][1], valuation, now)
    return screened, eligible


def _sourced(
    prepared: Prepared, candidates: Sequence[Candidate], now: Timestamp
) -> tuple[Prepared, Scans]:
    """The prepared descriptor knowing which elements some candidate holds (6.7 transfer),
    and the scans that told it (each candidate's state is scanned once per decision)."""
    scans = Scans(prepared.working_set, now)
    if not prepared.working_set.elements:
        return prepared, scans
    views = (candidate.view for candidate in candidates)
    movable, pinned = held_somewhere(prepared.working_set, views, now, scans)
    sourced = prepared.working_set.with_sources(movable, pinned)
    return replace(prepared, working_set=sourced), scans


def _results(
    screened: list[tuple[Candidate, tuple[Exclusion, ...]]],
    by_id: Mapping[CsciId, tuple[int, Scored]] | None = None,
) -> tuple[CandidateResult, ...]:
    """Every candidate with its exclusions, or with its suitability and rank (MSG-9)."""
    if not by_id:
        return tuple(CandidateResult(candidate, exclusions) for candidate, exclusions in screened)
    results: list[CandidateResult] = []
    for candidate, exclusions in screened:
        ranked = by_id.get(candidate.csci_id)
        if ranked is None:
            results.append(CandidateResult(candidate, exclusions))
        else:
            results.append(CandidateResult(candidate, exclusions, ranked[1], ranked[0]))
    return tuple(results)


def _qualified(results: Sequence[CandidateResult]) -> tuple[QualifiedValue, ...]:
    """Per candidate: values that failed a constraint or were used in a preference (7.5, M18)."""
    found: list[QualifiedValue] = []
    for result in results:
        for exclusion in result.exclusions:
            condition = _CONDITIONS.get(exclusion.reason)
            if condition is not None:
                found.append(
                    QualifiedValue(
                        exclusion.constraint,
                        condition,
                        Role.CONSTRAINT,
                        Effect.CONSTRAINT_NOT_SATISFIED,
                        result.csci_id,
                        exclusion.reuse_key,
                    )
                )
        if result.scored is not None and result.scored.valuation.qualified:
            found.extend(result.scored.valuation.qualified)
    return tuple(found)


def _combined(
    prepared: Prepared,
    screened: list[tuple[Candidate, tuple[Exclusion, ...]]],
    eligible: list[Valuation],
    policy: Policy,
) -> Combined:
    """P6 over the eligible, and every candidate's result with its rank."""
    trusted = {c.csci_id: c.trusted for c, exclusions in screened if not exclusions}
    scored = combine(eligible, prepared, trusted, policy.discounts)
    ranked = rank(scored, prepared.context, prepared.current)
    by_id = {entry.csci_id: (index + 1, entry) for index, entry in enumerate(ranked)}
    results = _results(screened, by_id)
    return Combined(tuple(ranked), by_id, results, _qualified(results))


def _fallback(
    prepared: Prepared, candidates: Sequence[Candidate], position: SessionPosition, now: Timestamp
) -> tuple[Prepared, Screened, list[FallbackRung], list[DegradationClass]]:
    """Rungs 1 and 2 of 8.4 when P4 left no candidate: re-banding relaxes only preferences,
    so it cannot restore eligibility; then each permitted reduction, cumulatively, in the
    order the descriptor lists them."""
    rungs = [FallbackRung.RE_BAND_DESCRIPTOR]
    applied: list[DegradationClass] = []
    descriptor = prepared.descriptor
    screened: Screened = ([], [])
    for reduction in descriptor.degradation:
        degraded = degrade(descriptor, reduction, prepared.tiers)
        if degraded is None:
            continue
        if FallbackRung.DEGRADE_WITHIN_CLASS not in rungs:
            rungs.append(FallbackRung.DEGRADE_WITHIN_CLASS)
        descriptor = degraded
        applied.append(reduction)
        prepared, scans = _sourced(
            prepare(descriptor, prepared.tiers, prepared.context, position), candidates, now
        )
        screened = _screen_all(prepared, candidates, now, scans)
        if screened[1]:
            break
    return prepared, screened, rungs, applied


def evaluate(
    request: EvaluationRequest,
    candidates: Sequence[Candidate],
    policy: Policy,
    now: Timestamp,
    kept: Screenings | None = None,
) -> Evaluation:
    """Run P4-P7 for one step over ``candidates`` (MSG-8 -> MSG-9).

    Every candidate comes back with its exclusions or its valuation, suitability and rank;
    when P4 leaves none eligible the ladder of 8.4 runs and the step (at admission, or with
    the session's time budget spent, the session) fails with a report. ``kept``: the
    session's earlier P4/P5 results (:mod:`memo`), reused where they hold exactly.
    """
    descriptor, position = request.descriptor, request.position
    context = policy.context
    prepared, scans = _sourced(
        prepare(descriptor, policy.tiers, context, position), candidates, now
    )
    screened, eligible = _screen_all(prepared, candidates, now, scans, kept)
    rungs: list[FallbackRung] = []
    applied: list[DegradationClass] = []
    if not eligible:
        first = screened
        prepared, (screened, eligible), rungs, applied = _fallback(
            prepared, candidates, position, now
        )
        if not eligible:
            return _failed(request, prepared, _results(first), rungs, now)
    combined = None if kept is None or applied else kept.combined(policy.discounts)
    if combined is None:
        combined = _combined(prepared, screened, eligible, policy)
        if kept is not None:
            if applied:
                kept.forget_combined()
            else:
                kept.keep_combined(policy.discounts, combined)
    ranked, by_id, results = combined.ranked, combined.by_id, combined.results
    occasion = Occasion(request.trigger, now, prepared.descriptor.remaining_horizon)
    judgement = judge(ranked, position, context, occasion)
    rung = FallbackRung.DEGRADE_WITHIN_CLASS if applied else None
    if rung is None and judgement.constraint_violated:
        rung = FallbackRung.MOVE_WORK
    if rung is None and prepared.preference is not None and ranked[0].meets_objective is False:
        rung = FallbackRung.RE_BAND_DESCRIPTOR
    return Evaluation(
        descriptor.session_id,
        descriptor.turn_id,
        descriptor.step_id,
        request.point,
        request.trigger,
        now,
        prepared.descriptor,
        context.combination,
        results,
        outcome=judgement.outcome,
        selected=judgement.selected,
        suitability=by_id[judgement.selected][1].suitability,
        change=judgement.change,
        stability=judgement.stability,
        fallback_rung=rung,
        degradation_applied=tuple(applied),
        qualified=combined.qualified,
    )


def _failed(
    request: EvaluationRequest,
    prepared: Prepared,
    results: tuple[CandidateResult, ...],
    rungs: list[FallbackRung],
    now: Timestamp,
) -> Evaluation:
    """Rungs 3 to 5: nothing eligible to move to, so fail the step with a report; fail the
    session at admission (no candidate can serve it) or when its time budget is spent."""
    point = request.point
    rungs = [*rungs, FallbackRung.MOVE_WORK, FallbackRung.FAIL_STEP]
    remaining = prepared.session_time_remaining
    session_failed = point is DecisionPoint.DP1 or (remaining is not None and remaining <= 0)
    if session_failed:
        rungs.append(FallbackRung.FAIL_SESSION)
    exclusions = [e for r in results for e in r.exclusions]
    report = failure(
        exclusions,
        request.trigger,
        point,
        rungs,
        f"no candidate satisfies every constraint ({len(results)} rejected)",
    )
    descriptor = request.descriptor
    return Evaluation(
        descriptor.session_id,
        descriptor.turn_id,
        descriptor.step_id,
        point,
        request.trigger,
        now,
        descriptor,
        prepared.context.combination,
        results,
        fallback_rung=rungs[-1],
        failure=report,
        session_failed=session_failed,
        qualified=_qualified(results),
    )
