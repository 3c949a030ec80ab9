"""Selection outcomes as the select-service reply and as ``selection-decisions`` records.

The ``selection-outcome`` and ``candidate`` groupings of ietf-cats-service-metrics
(service-metrics-op 6.2.3 Step 7, 6.2.5): every candidate with its TST and either its score and
rank or its exclusion reason identity.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from enum import StrEnum

from controller.selection.joint import (
    CandidateReport,
    ExclusionReason,
    FallbackLevel,
    Metric,
    Micros,
    Outcome,
    RelaxationRecord,
    RelaxationStep,
    ResultKind,
)
from controller.selection.units import Timestamp
from controller.service_metrics.policy import MODULE
from controller.service_metrics.render import date_and_time, ms
from controller.types import Json

TYPES = "ietf-cats-types"
#: Exclusion reasons whose identities ietf-cats-types defines (value-not-usable).
_TYPES_REASONS = frozenset({ExclusionReason.VALUE_UNKNOWN, ExclusionReason.VALUE_STALE})
#: Relaxation steps whose thresholds are times (microseconds in the core, ms in YANG).
_TIME_STEPS = frozenset({RelaxationStep.RELAX_JITTER, RelaxationStep.RELAX_LATENCY})


def _sm(name: str) -> str:
    return f"{MODULE}:{name}"


def fallback_level(level: FallbackLevel) -> str:
    """The cats-sm:fallback-level enum name."""
    return level.name.lower().replace("_", "-")


def _threshold(step: RelaxationStep, value: int | Decimal | None) -> str | None:
    if value is None:
        return None
    if step in _TIME_STEPS:
        value = Decimal(value) / 1000
    return str(Decimal(value).quantize(Decimal("0.001")))


def _relaxation(record: RelaxationRecord) -> Json:
    values: Json = {
        "position": record.position,
        "step": _sm(record.step.value),
        "round": record.round,
        "threshold-before": _threshold(record.step, record.before),
        "threshold-after": _threshold(record.step, record.after),
    }
    return {name: value for name, value in values.items() if value is not None}


def _time(value: Micros | None) -> str | None:
    return None if value is None else ms(value)


def estimated_metrics(estimated: tuple[Metric, ...], tst: Micros | None) -> list[str] | None:
    """``estimated-metric``: the estimated values of a candidate, and its TST when that is
    built on an estimated Computing Time (6.2.3 Step 4); None when every value was measured."""
    if not estimated:
        return None
    names = [_sm(m.value) for m in estimated]
    if tst is not None and Metric.COMPUTING_TIME in estimated:
        names.append(_sm(Metric.TOTAL_SERVICE_TIME.value))
    return names


def candidate_json(report: CandidateReport) -> Json:
    """One ``candidate``: metrics at decision time, TST, then score and rank or reason."""
    entry, path = report.entry, report.path
    values: Json = {
        "csci-id": entry.csci_id,
        "egress": path.egress if path is not None else entry.egress,
        "gas": entry.gas,
        "computing-time": ms(entry.computing_time),
        "price": entry.price,
        "reputation": entry.reputation,
        "security-level": entry.security_level,
        "health": entry.health.value,
    }
    if path is not None:
        values["network-delay"] = ms(path.network_delay)
        values["jitter"] = _time(path.jitter)
        values["bandwidth"] = path.bandwidth
        values["loss-rate"] = path.loss_rate
    values["total-service-time"] = _time(report.tst)
    values["estimated-metric"] = estimated_metrics(entry.estimated, report.tst)
    if report.reason is not None:
        module = TYPES if report.reason in _TYPES_REASONS else MODULE
        values["reason"] = f"{module}:{report.reason.value}"
        values["detail"] = report.detail or None
    elif report.score is not None:
        values["score"] = f"{report.score:.6f}"
        values["rank"] = report.rank
        if report.violated_soft:
            values["violated-soft-constraint"] = [_sm(m.value) for m in report.violated_soft]
    if report.unusable:
        values["unusable-value"] = [
            {"metric": _sm(u.metric.value), "condition": f"{TYPES}:{u.condition.value}"}
            for u in report.unusable
        ]
    return {name: value for name, value in values.items() if value is not None}


def outcome_json(outcome: Outcome, report: str = "all") -> Json:
    """The ``selection-outcome`` grouping; ``report`` is the candidate-report asked for, and
    the list is called complete whenever the selection evaluated every candidate."""
    listed = report if report == "none" or not outcome.complete else "all"
    values: Json = {
        "result": outcome.result.value,
        "fallback-level": fallback_level(outcome.fallback_level),
        "candidate-report": listed,
        "csci-id": outcome.csci_id,
        "egress": outcome.egress,
        "computing-time": _time(outcome.computing_time),
        "network-delay": _time(outcome.network_delay),
        "total-service-time": _time(outcome.tst),
        "estimated-metric": estimated_metrics(outcome.estimated, outcome.tst),
        "decided-by": None if outcome.decided_by is None else outcome.decided_by.value,
        "deciding-objective": None
        if outcome.deciding_objective is None
        else _sm(outcome.deciding_objective.value),
        "deciding-tie-break": None
        if outcome.deciding_tie_break is None
        else _sm(outcome.deciding_tie_break.value),
        "hierarchical-egress": outcome.hierarchical_egress,
        "normalization-from-candidates": [None] if outcome.normalization_from_candidates else None,
    }
    if outcome.relaxations:
        values["relaxation"] = [_relaxation(r) for r in outcome.relaxations]
    if outcome.candidates:
        values["candidate"] = [candidate_json(r) for r in outcome.candidates]
    return {name: value for name, value in values.items() if value is not None}


class Trigger(StrEnum):
    """cats-sm:decision-trigger: what caused a decision (6.2.3, 6.2.5, 7.3-7.4)."""

    REQUEST = "request"
    RE_EVALUATION = "re-evaluation"
    RE_ROUTING = "re-routing"


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """One kept decision: the request, the merged requirement in force and the outcome."""

    decision_id: str
    time: Timestamp
    request: Json  # the record's ``request`` container
    requirement: Json  # the merged service-requirement document
    outcome: Outcome
    report: str = "all"  # the candidate-report asked for
    trigger: Trigger = Trigger.REQUEST


def record_json(record: DecisionRecord) -> Json:
    """One ``selection-decisions/decision``."""
    values: Json = {
        "id": record.decision_id,
        "time": date_and_time(record.time),
        "trigger": record.trigger.value,
        "request": record.request,
    }
    if record.requirement:
        values["requirement"] = record.requirement
    values.update(outcome_json(record.outcome, record.report))
    return values


def notification_json(record: DecisionRecord) -> Json:
    """The ``selection-decision`` notification of a record: the outcome without candidates,
    so that its cost does not grow with the candidate set (6.2.3 Step 7)."""
    outcome, request = record.outcome, record.request
    values: Json = {
        "decision-id": record.decision_id,
        "trigger": record.trigger.value,
        "cs-id": request["cs-id"],
        "ingress": request.get("ingress"),
        "session-id": request.get("session-id"),
        "result": outcome.result.value,
        "fallback-level": fallback_level(outcome.fallback_level),
        "csci-id": outcome.csci_id,
        "egress": outcome.egress,
        "total-service-time": _time(outcome.tst),
    }
    present = {name: value for name, value in values.items() if value is not None}
    return {f"{MODULE}:selection-decision": present}


@dataclass(frozen=True, slots=True)
class Statistics:
    """``selection-decisions/statistics``: decisions by fallback level and result."""

    decisions: int = 0
    relaxed: int = 0
    network_only: int = 0
    default_route: int = 0
    service_unavailable: int = 0

    def counted(self, outcome: Outcome) -> Statistics:
        """The statistics with one more decision."""
        level = outcome.fallback_level
        return replace(
            self,
            decisions=self.decisions + 1,
            relaxed=self.relaxed + (level is FallbackLevel.RELAX_CONSTRAINTS),
            network_only=self.network_only + (level is FallbackLevel.NETWORK_ONLY),
            default_route=self.default_route + (level is FallbackLevel.DEFAULT_ROUTE),
            service_unavailable=self.service_unavailable
            + (outcome.result is ResultKind.SERVICE_UNAVAILABLE),
        )

    def as_json(self) -> Json:
        """The ``statistics`` container (counter64 values as strings)."""
        return {
            "decisions": str(self.decisions),
            "relaxed": str(self.relaxed),
            "network-only": str(self.network_only),
            "default-route": str(self.default_route),
            "service-unavailable": str(self.service_unavailable),
        }
