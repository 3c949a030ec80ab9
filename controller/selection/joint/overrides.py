"""Policy-driven overrides, affinity, hierarchical selection and load distribution
(service-metrics-op 6.2.4).

Overrides take precedence over the optimization: they apply to the Candidate_Set left by the
hard constraints, before Step 6. Maintenance avoidance always excludes; geo-fencing and
provider preference exclude always (restrict) or only while a matching candidate remains
(prefer). Geo-fencing is applied before provider preference.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.selection.joint.outcome import CandidateReport
from controller.selection.joint.ranking import draw
from controller.selection.joint.requirement import LoadDistribution, PolicyOverride
from controller.selection.joint.tables import CstEntry
from controller.selection.joint.vocabulary import ExclusionReason, LoadMethod, OverrideMode
from controller.types import CsciId, ForwarderId

GEO_BIT = 2
PROVIDER_BIT = 1
_DRAW_SCALE = 2**64


def _excluded(report: CandidateReport, reason: ExclusionReason, detail: str) -> CandidateReport:
    return CandidateReport(report.entry, report.path, report.tst, reason=reason, detail=detail)


def restrict(report: CandidateReport, overrides: PolicyOverride) -> CandidateReport | None:
    """The exclusion of a candidate by maintenance avoidance or a restrict-mode override."""
    entry = report.entry
    if overrides.avoid_maintenance and entry.under_maintenance:
        return _excluded(report, ExclusionReason.UNDER_MAINTENANCE, "site under maintenance")
    geo = overrides.geo_fence
    if (
        geo.permitted_regions
        and geo.mode is OverrideMode.RESTRICT
        and entry.region not in geo.permitted_regions
    ):
        return _excluded(
            report, ExclusionReason.OUTSIDE_GEO_FENCE, f"region {entry.region} not permitted"
        )
    pref = overrides.provider_preference
    if (
        pref.preferred_providers
        and pref.mode is OverrideMode.RESTRICT
        and entry.provider not in pref.preferred_providers
    ):
        return _excluded(
            report,
            ExclusionReason.PROVIDER_NOT_PREFERRED,
            f"provider {entry.provider} not preferred",
        )
    return None


def preference_class(entry: CstEntry, overrides: PolicyOverride) -> int:
    """0 for a fully preferred candidate; GEO_BIT / PROVIDER_BIT set where a prefer-mode
    override does not match. The lowest class present wins."""
    geo = overrides.geo_fence
    pref = overrides.provider_preference
    value = 0
    if geo.permitted_regions and entry.region not in geo.permitted_regions:
        value |= GEO_BIT
    if pref.preferred_providers and entry.provider not in pref.preferred_providers:
        value |= PROVIDER_BIT
    return value


def prefer(
    feasible: Sequence[CandidateReport], overrides: PolicyOverride
) -> tuple[list[CandidateReport], list[CandidateReport]]:
    """Keep the candidates of the best preference class; exclude the others."""
    if not feasible:
        return [], []
    classes = [preference_class(r.entry, overrides) for r in feasible]
    best = min(classes)
    kept: list[CandidateReport] = []
    dropped: list[CandidateReport] = []
    for report, value in zip(feasible, classes, strict=True):
        if value == best:
            kept.append(report)
        elif value & GEO_BIT and not best & GEO_BIT:
            detail = f"region {report.entry.region} outside the preferred regions"
            dropped.append(_excluded(report, ExclusionReason.OUTSIDE_GEO_FENCE, detail))
        else:
            detail = f"provider {report.entry.provider} not preferred"
            dropped.append(_excluded(report, ExclusionReason.PROVIDER_NOT_PREFERRED, detail))
    return kept, dropped


def affined(feasible: Sequence[CandidateReport], csci_id: CsciId | None) -> CandidateReport | None:
    """The affined CSCI-ID if it is still in the Candidate_Set (Affinity Requirement)."""
    if csci_id is None:
        return None
    return next((r for r in feasible if r.csci_id == csci_id), None)


def hierarchical(
    feasible: Sequence[CandidateReport],
) -> tuple[ForwarderId | None, list[CandidateReport], list[CandidateReport]]:
    """Stage 1 of Hierarchical Selection: keep the candidates behind the egress with the
    minimum Network Delay (ties by egress identifier)."""
    best: tuple[int, str] | None = None
    for report in feasible:
        assert report.path is not None  # feasible candidates have a path
        key = (report.path.network_delay, report.path.egress)
        if best is None or key < best:
            best = key
    if best is None:
        return None, [], []
    egress = ForwarderId(best[1])
    kept = [r for r in feasible if r.entry.egress == egress]
    detail = f"egress {egress} has the minimum network delay"
    dropped = [
        _excluded(r, ExclusionReason.NOT_ON_SELECTED_EGRESS, detail)
        for r in feasible
        if r.entry.egress != egress
    ]
    return egress, kept, dropped


def spread(
    feasible: Sequence[CandidateReport], load: LoadDistribution, *, seed: int, turn: int
) -> CandidateReport:
    """Load balancing: the pick among candidates within the TST tolerance of the best."""
    best = min(r.tst or 0 for r in feasible)
    pool = sorted(
        (r for r in feasible if (r.tst or 0) <= best + load.tst_tolerance),
        key=lambda r: r.csci_id,
    )
    if load.method is LoadMethod.ROUND_ROBIN:
        return pool[turn % len(pool)]
    total = sum(r.entry.gas for r in pool)
    point = draw(seed, turn, "load") * total // _DRAW_SCALE
    for report in pool:
        point -= report.entry.gas
        if point < 0:
            return report
    return pool[-1]
