"""The decision artifacts as RFC 7951 members of ietf-cats-agent-selection (6.5, MSG-9).

Selection results (MSG-9), decision records, commitments, handoffs and failure reports are
rendered when a reply is sent or the state is read; identities get their module prefix
(the value-not-usable reasons are ietf-cats-types identities).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence

from controller.agent_selection.compaction import VALUED, valued
from controller.agent_selection.handoff import Handoff, HandoffState
from controller.agent_selection.sessions import CommitmentRecord
from controller.agent_selection.values import date_and_time, decimal, ms, qualified
from controller.selection.mapping import (
    Evaluation,
    Exclusion,
    FailureReport,
    Lexicographic,
)
from controller.selection.mapping.findings import QualifiedValue
from controller.selection.mapping.vocabulary import Element, Reason
from controller.types import Json

TYPES = "ietf-cats-types"
_TYPES_REASONS = frozenset(
    {
        Reason.VALUE_UNKNOWN,
        Reason.VALUE_STALE,
        Reason.VALUE_UNATTRIBUTED,
        Reason.VALUE_MEAN_FOR_TAIL,
    }
)


def reason(value: Reason) -> str:
    """An exclusion reason identity with its module."""
    return f"{TYPES}:{value.value}" if value in _TYPES_REASONS else qualified(value.value)


def exclusions(found: Iterable[Exclusion]) -> list[Json]:
    """``exclusion``/``excluded``/``rejected`` entries; a second exclusion of one candidate for
    one reason (two elements that may not move) is folded into the first's detail, since the
    list is keyed by candidate and reason."""
    entries: dict[tuple[str, str], Json] = {}
    for exclusion in found:
        key = (exclusion.csci_id, exclusion.reason.value)
        entry = entries.get(key)
        if entry is not None:
            more = exclusion.reuse_key or exclusion.detail
            entry["detail"] = f"{entry.get('detail', '')}; also {more}".lstrip("; ")
            continue
        entry = {
            "csci-id": exclusion.csci_id,
            "reason": reason(exclusion.reason),
            "constraint": qualified(exclusion.constraint.value),
        }
        for name, value in (
            ("reuse-key", exclusion.reuse_key),
            ("comparison", exclusion.comparison),
            ("required", exclusion.required),
            ("observed", exclusion.observed),
            ("detail", exclusion.detail),
        ):
            if value:
                entry[name] = value
        entries[key] = entry
    return list(entries.values())


def failure(report: FailureReport) -> Json:
    """A failure-report (8.4 rung 4): the constraint, the trigger, the rungs, the rejected."""
    constraint = report.constraint or Element.SUITABILITY
    found: Json = {"constraint": qualified(constraint.value)}
    if report.trigger is not None:
        found["trigger"] = qualified(report.trigger.value)
    if report.decision_point is not None:
        found["decision-point"] = qualified(report.decision_point.value)
    if report.rungs_attempted:
        found["rung-attempted"] = [qualified(r.value) for r in report.rungs_attempted]
    rejected = exclusions(report.rejected)
    if rejected:
        found["rejected"] = rejected
    if report.detail:
        found["detail"] = report.detail
    return found


def commitment(entry: CommitmentRecord, *, state: str | None = None) -> Json:
    """commitment-info, with its ``state`` and record when rendered in the session."""
    c = entry.commitment
    steps: Json = {"first": c.first_step}
    if c.last_step is not None:
        steps["last"] = c.last_step
    found: Json = {
        "commitment-id": c.commitment_id,
        "csci-id": c.csci_id,
        "steps": steps,
        "created-at": date_and_time(c.created_at),
        "steering-instruction-id": entry.instruction_id,
    }
    if c.lifetime is not None:
        found["lifetime"] = ms(c.lifetime)
        found["expires-at"] = date_and_time(c.created_at + c.lifetime)
    if entry.endpoints:
        found["endpoint"] = list(entry.endpoints)
    if state is not None:
        found["state"] = state
        if entry.superseded_by is not None:
            found["superseded-by"] = entry.superseded_by
        if entry.record_id is not None:
            found["record-id"] = str(entry.record_id)
    return found


def _some(found: Json, pairs: Iterable[tuple[str, object]]) -> Json:
    """Set each member whose value is not None (nor empty)."""
    for name, value in pairs:
        if value is not None and value not in ([], ""):
            found[name] = value
    return found


def _identities(values: Iterable[object]) -> list[str]:
    return [qualified(str(getattr(v, "value", v))) for v in values]


def _selected(ev: Evaluation, held: CommitmentRecord | None, handoff_id: str | None) -> Json:
    assert ev.outcome is not None
    return _some(
        {"selected": ev.selected, "outcome": qualified(ev.outcome.value)},
        (
            ("suitability", None if ev.suitability is None else decimal(ev.suitability)),
            (
                "fallback-rung",
                None if ev.fallback_rung is None else qualified(ev.fallback_rung.value),
            ),
            ("degradation-applied", _identities(ev.degradation_applied)),
            ("commitment", None if held is None else commitment(held)),
            ("handoff-id", handoff_id),
        ),
    )


def selection_result(
    ev: Evaluation,
    record_id: int | None,
    held: CommitmentRecord | None,
    handoff_id: str | None = None,
) -> Json:
    """The selection-result grouping (MSG-9)."""
    found = _some(
        {"session-id": ev.session_id},
        (
            ("turn-id", ev.turn_id),
            ("step-id", ev.step_id),
            ("record-id", None if record_id is None else str(record_id)),
        ),
    )
    if ev.failure is not None:
        found["step-failure"] = failure(ev.failure)
    elif ev.selected is not None and ev.outcome is not None:
        found.update(_selected(ev, held, handoff_id))
    return _some(found, (("excluded", exclusions(ev.exclusions)),))


def _valuation(values: array[float] | None) -> Json:
    if values is None:
        return {}
    given = dict(zip(VALUED, values, strict=True))
    found: Json = {}
    for name in ("forwarding", "computing", "storage"):
        value = given[name]
        found[name] = {"unknown": [None]} if math.isnan(value) else {"expected-time": ms(value)}
    for name in ("transfer-time", "recompute-time", "state-cost"):
        if not math.isnan(given[name]):
            found[name] = ms(given[name])
    if not math.isnan(given["state-bytes"]):
        found["state-bytes"] = str(int(given["state-bytes"]))
    if not math.isnan(given["suitability"]):
        found["suitability"] = decimal(given["suitability"])
    if not math.isnan(given["band"]):
        found["band"] = str(int(given["band"]))
    if not math.isnan(given["tail-ok"]):
        found["tail-ok"] = bool(given["tail-ok"])
    elif not math.isnan(given["tail-verified"]):
        found["tail-verified"] = bool(given["tail-verified"])
    return found


def qualified_values(values: Sequence[QualifiedValue]) -> list[Json]:
    """The record's qualified-value list (7.5, M18, M20, M34): every value the decision used
    that was unknown, stale, unattributed, a mean for a tail or an estimate, and how."""
    found: list[Json] = []
    for index, value in enumerate(values):
        entry: Json = {
            "index": index,
            "element": qualified(value.element.value),
            "condition": value.condition.value,
            "used-in": value.used_in.value,
            "effect": value.effect.value,
        }
        if value.csci_id is not None:
            entry["csci-id"] = value.csci_id
        if value.reuse_key is not None:
            entry["reuse-key"] = value.reuse_key
        found.append(entry)
    return found


def _change(ev: Evaluation) -> Json:
    change = ev.change
    if change is None:
        return {}
    found: Json = {}
    if change.from_csci is not None:
        found["from"] = change.from_csci
    if change.to_csci is not None:
        found["to"] = change.to_csci
    for name, value in (
        ("transfer-or-rebuild", change.transfer_or_rebuild),
        ("artifact-load", change.artifact_load),
        ("cost", change.cost),
    ):
        if value is not None:
            found[name] = ms(value)
    found["disturbance"] = ms(change.disturbance)
    if change.gain is not None:
        found["gain"] = decimal(change.gain)
    if change.gain_time is not None:
        found["gain-time"] = decimal(change.gain_time)
    found["horizon-steps"] = change.horizon_steps
    return found


def _stability(ev: Evaluation) -> Json:
    check = ev.stability
    if check is None:
        return {}
    found: Json = {"applied": check.applied, "step-in-flight": check.step_in_flight}
    for name, value in (
        ("min-interval-met", check.min_interval_met),
        ("min-improvement-met", check.min_improvement_met),
        ("gain-covers-cost", check.gain_covers_cost),
    ):
        if value is not None:
            found[name] = value
    return found


def _combination(ev: Evaluation) -> Json:
    rule = ev.combination
    if isinstance(rule, Lexicographic):
        return {"order": _identities(rule.order)}
    weights = [{"dimension": qualified(d.value), "value": f"{w:.4f}"} for d, w in rule.weights]
    return {"weight": weights}


def decision_record(
    record_id: int,
    ev: Evaluation,
    descriptor: Json,
    extra: Json,
    values: Sequence[array[float] | None] | None = None,
) -> Json:
    """A decision-record entry (6.5, M8): input, every candidate, the outcome (``values``:
    the candidates' valuations as :func:`compact` kept them)."""
    kept = values if values is not None else [valued(r) for r in ev.results]
    found: Json = {
        "record-id": str(record_id),
        "created-at": date_and_time(ev.created_at),
        "decision-point": qualified(ev.decision_point.value),
        "descriptor": descriptor,
        "candidate": [
            {"csci-id": r.csci_id, "valuation": _valuation(v)}
            for r, v in zip(ev.results, kept, strict=True)
        ],
        "combination": _combination(ev),
    }
    _some(
        found,
        (
            ("turn-id", ev.turn_id),
            ("step-id", ev.step_id),
            ("trigger", None if ev.trigger is None else qualified(ev.trigger.value)),
            ("eligible", list(ev.eligible)),
            ("exclusion", exclusions(ev.exclusions)),
            ("change", _change(ev) or None),
            ("stability", _stability(ev) or None),
            ("outcome", None if ev.outcome is None else qualified(ev.outcome.value)),
            ("selected", ev.selected),
            ("suitability", None if ev.suitability is None else decimal(ev.suitability)),
            (
                "fallback-rung",
                None if ev.fallback_rung is None else qualified(ev.fallback_rung.value),
            ),
            ("degradation-applied", _identities(ev.degradation_applied)),
            ("failure", None if ev.failure is None else failure(ev.failure)),
            ("qualified-value", qualified_values(ev.qualified)),
        ),
    )
    found.update(extra)
    return found


def _reservation(entry: Handoff) -> Json | None:
    found = _some(
        {},
        (
            ("reservation-id", entry.reservation_id),
            ("valid-from", None if entry.valid_from is None else date_and_time(entry.valid_from)),
            (
                "valid-until",
                None if entry.valid_until is None else date_and_time(entry.valid_until),
            ),
        ),
    )
    return found or None


def handoff(entry: Handoff) -> Json:
    """A handoff-record entry (a requested handoff is not rendered: it has no state yet)."""
    transitions = {s: t for s, t in entry.transitions if s is not HandoffState.REQUESTED}
    aborted = entry.abort_reason
    return _some(
        {
            "handoff-id": entry.handoff_id,
            "source": entry.source,
            "target": entry.target,
            "state": entry.state.value,
            "record-id": str(entry.record_id),
        },
        (
            ("moved-key", list(entry.moved)),
            ("size", str(entry.size) if entry.size else None),
            ("abort-reason", None if aborted is None else qualified(aborted.value)),
            ("abort-detail", entry.abort_detail if aborted is not None else None),
            ("reservation", _reservation(entry)),
            (
                "transition",
                [{"state": s.value, "at": date_and_time(t)} for s, t in transitions.items()],
            ),
            ("usable-key", sorted(entry.usable)),
            ("unusable-key", sorted(entry.unusable)),
            ("commitment-id", entry.commitment_id),
        ),
    )
