"""Agent sessions (draft-mo-cats-agent-selection-mapping) as the session page shows them.

Each decision record (agent draft 8.1, 8.3; ietf-cats-agent-selection
``sessions/session/decision-record``) is shown with its decision point and trigger, the
eligible candidates and the exclusions with their reasons, each candidate's valuation (P5:
forwarding, computing, state to place, transfer, recompute, state cost, suitability), the
change weighed against its gain over the look-ahead horizon, the stability rules (8.2), the
outcome and the fallback rung (8.4). The timeline puts the session's decisions, commitments,
handoff transitions and accounting in time order.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.console.pages.tables import Json, bare, entries, shown

AS = "ietf-cats-agent-selection"
SESSIONS = f"{AS}:agent-selection/sessions"
VALUATION = (
    "state-bytes",
    "state-fits",
    "transfer-time",
    "recompute-time",
    "state-cost",
    "tail-ok",
    "budget-ok",
    "suitability",
)
STABILITY = (
    "applied",
    "min-interval-met",
    "min-improvement-met",
    "gain-covers-cost",
    "step-in-flight",
)
CHANGE = ("from", "to", "transfer-or-rebuild", "disturbance", "cost", "gain", "horizon-steps")


@dataclass(frozen=True, slots=True)
class RecordView:
    """One decision record."""

    record_id: str
    heading: str
    facts: tuple[tuple[str, str], ...]
    valuations: tuple[tuple[str, dict[str, str]], ...]
    exclusions: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class TimelineItem:
    """One moment of the session."""

    time: str
    kind: str
    what: str


def session_rows(document: Json) -> list[Json]:
    """The sessions of a ``sessions`` reply."""
    top = document.get(f"{AS}:sessions") or {}
    found = top.get("session", []) if isinstance(top, dict) else []
    return [s for s in found if isinstance(s, dict)]


def one_session(document: Json) -> Json | None:
    """The session of a ``sessions/session=ID`` reply."""
    found = entries({"s": {"session": document.get(f"{AS}:session", [])}}, "s", "session")
    return found[0] if found else None


def _valuation(candidate: Json) -> dict[str, str]:
    valuation = candidate.get("valuation") or {}
    values = {name: shown(valuation.get(name)) for name in VALUATION}
    for part in ("forwarding", "computing"):
        inner = valuation.get(part) or {}
        scalars = {k: v for k, v in inner.items() if not isinstance(v, dict | list)}
        values[part] = ", ".join(f"{k} {shown(v)}" for k, v in scalars.items()) or "-"
    return values


def _exclusion(item: Json) -> tuple[str, str]:
    parts = [bare(item.get("reason", "?"))]
    for name in ("constraint", "reuse-key", "comparison", "required", "observed", "detail"):
        if item.get(name) is not None:
            parts.append(f"{name} {shown(item[name])}")
    return str(item.get("csci-id", "")), "; ".join(parts)


def record_view(record: Json) -> RecordView:
    """A decision record as the page shows it."""
    point = bare(record.get("decision-point", "?"))
    trigger = bare(record.get("trigger")) if record.get("trigger") else "-"
    step = f"turn {shown(record.get('turn-id'))} step {shown(record.get('step-id'))}"
    change = record.get("change") or {}
    stability = record.get("stability") or {}
    facts = (
        ("created", shown(record.get("created-at"))),
        ("outcome", shown(record.get("outcome"))),
        ("selected", shown(record.get("selected"))),
        ("suitability", shown(record.get("suitability"))),
        ("eligible", shown(record.get("eligible"))),
        ("change", ", ".join(f"{k} {shown(change.get(k))}" for k in CHANGE if k in change) or "-"),
        (
            "stability rules",
            ", ".join(f"{k} {shown(stability.get(k))}" for k in STABILITY if k in stability) or "-",
        ),
        ("fallback rung", shown(record.get("fallback-rung"))),
        ("degradation applied", shown(record.get("degradation-applied"))),
        ("commitment", shown(record.get("commitment-id"))),
        ("handoff", shown(record.get("handoff-id"))),
    )
    valuations = tuple(
        (str(c.get("csci-id", "")), _valuation(c))
        for c in record.get("candidate", [])
        if isinstance(c, dict)
    )
    exclusions = tuple(_exclusion(e) for e in record.get("exclusion", []) if isinstance(e, dict))
    heading = f"{point} ({trigger}), {step}"
    return RecordView(str(record.get("record-id", "")), heading, facts, valuations, exclusions)


def timeline(session: Json) -> list[TimelineItem]:
    """Decisions, commitments, handoff transitions and accounting, in time order."""
    items: list[TimelineItem] = []
    for record in session.get("decision-record", []):
        what = (
            f"{bare(record.get('decision-point', '?'))}: {shown(record.get('outcome'))} "
            f"{shown(record.get('selected'))} (step {shown(record.get('step-id'))})"
        )
        items.append(TimelineItem(str(record.get("created-at", "")), "decision", what))
    for commitment in session.get("commitment", []):
        steps = commitment.get("steps") or {}
        span = f"{shown(steps.get('first'))}-{shown(steps.get('last'))}"
        what = (
            f"{commitment.get('commitment-id')} to {commitment.get('csci-id')} steps {span}, "
            f"{shown(commitment.get('state'))}"
        )
        items.append(TimelineItem(str(commitment.get("created-at", "")), "commitment", what))
    for handoff in session.get("handoff", []):
        for transition in handoff.get("transition", []):
            what = (
                f"{handoff.get('handoff-id')} {handoff.get('source')} -> {handoff.get('target')}: "
                f"{bare(transition.get('state', '?'))}"
            )
            items.append(TimelineItem(str(transition.get("at", "")), "handoff", what))
    accounting = session.get("accounting") or {}
    for turn in accounting.get("turn", []) if isinstance(accounting, dict) else []:
        for step in turn.get("step", []):  # accounting/turn/step (P11)
            spent = ", ".join(
                f"{bare(b.get('dimension', '?'))} {shown(b.get('consumed'))}"
                for b in step.get("budget", [])
            )
            where = f"turn {turn.get('turn-id')} step {step.get('step-id')}"
            items.append(TimelineItem("", "accounting", f"{where}: {spent}"))
    dated = sorted((i for i in items if i.time), key=lambda item: item.time)
    return dated + [i for i in items if not i.time]  # accounting has no time of its own
