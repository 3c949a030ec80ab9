"""What the gateway prints: each exchange on a line, each decision record of the C-PS with its
outcome, the candidate chosen, the exclusions with their reason codes (M50), the change it
weighed and the stability rules of 8.3 that held it, the fallback rung and the degradation
applied (8.4) (pure: values in, lines out)."""

from __future__ import annotations

from collections.abc import Iterable

from agents.gateway.expect import local
from controller.types import Json


def _keys(working: Json | None) -> str:
    if working is None:
        return ""
    keys = ", ".join(str(e.get("reuse-key")) for e in working.get("element", ()))
    return f" (working set: {keys or 'empty'})"


def _described(operation: str, members: Json) -> str:
    """The operation and what it carries, in a few words."""
    if operation == "submit-descriptor":
        trigger = members.get("trigger")
        return f"submit-descriptor{'' if trigger is None else ' at ' + local(trigger)}" + _keys(
            members["descriptor"].get("working-set")
        )
    if operation == "step-boundary":
        return f"step-boundary {members.get('boundary', 'step-start')}" + _keys(
            members.get("working-set")
        )
    if operation == "invalidation-notice":
        progress = members.get("step-progress", {})
        return (
            f"invalidation-notice {local(members['condition'])}: "
            f"{members.get('observed', '')} ({progress.get('endpoint', '-')})"
        )
    if operation == "accounting-feedback":
        amounts = ", ".join(
            f"{local(c['dimension'])} {c['amount']}{' ' + c['currency'] if 'currency' in c else ''}"
            for c in members.get("consumption", ())
        )
        return f"accounting-feedback {members.get('scope', 'step')}: {amounts}"
    if operation == "close-session":
        return f"close-session {members.get('reason', 'completed')}"
    return operation


def _answer(operation: str, reply: Json) -> str:
    if operation == "submit-descriptor":
        return str(reply.get("evaluation", "ok"))
    if operation == "invalidation-notice":
        return "acted on" if reply.get("acted-on") else "not acted on"
    return "ok"


def exchange_line(operation: str, members: Json, reply: Json | None, error: str | None) -> str:
    """One line per RPC: what went, what came back."""
    answer = f"FAILED: {error}" if error is not None else _answer(operation, reply or {})
    return f"{_described(operation, members)}: {answer}"


def _yes(value: object) -> str:
    return "yes" if value else "no"


def _change(change: Json) -> str:
    moved = f"{change.get('from', '-')} -> {change.get('to', '-')}"
    parts = [f"cost {change['cost']} ms" if "cost" in change else "cost unknown"]
    if "transfer-or-rebuild" in change:
        parts.append(f"transfer or rebuild {change['transfer-or-rebuild']} ms")
    if "gain" in change:
        parts.append(f"gain {change['gain']} over {change.get('horizon-steps', 0)} steps")
    return f"change {moved}: " + ", ".join(parts)


def _stability(stability: Json) -> str:
    names = (
        ("min-interval-met", "min interval met"),
        ("min-improvement-met", "min improvement met"),
        ("gain-covers-cost", "gain covers cost"),
        ("step-in-flight", "step in flight"),
    )
    parts = [f"{label} {_yes(stability[key])}" for key, label in names if key in stability]
    return (
        "stability rules "
        + ("applied" if stability.get("applied") else "not applied")
        + (f" ({', '.join(parts)})" if parts else "")
    )


def _exclusions(entries: Iterable[Json]) -> list[str]:
    lines = []
    for e in entries:
        detail = f" on {local(e['constraint'])}" if "constraint" in e else ""
        observed = f", observed {e['observed']}" if "observed" in e else ""
        lines.append(f"excluded {e['csci-id']}: {local(e['reason'])}{detail}{observed}")
    return lines


def _outcome(record: Json) -> str:
    if "selected" not in record:
        return "no selection"
    what = f"{local(record.get('outcome', '?'))} {record['selected']}"
    if "suitability" in record:
        what += f" (suitability {record['suitability']})"
    return what


def _failure(failure: Json) -> list[str]:
    constraint = local(failure.get("constraint", "?"))
    lines = [f"failure: {constraint} {failure.get('detail', '')}".rstrip()]
    return lines + ["  " + line for line in _exclusions(failure.get("rejected", ()))]


def _details(record: Json) -> list[str]:
    """Why: eligibility, exclusions, the change weighed, the stability rules, the ladder."""
    details: list[str] = []
    if record.get("eligible"):
        details.append("eligible: " + ", ".join(str(c) for c in record["eligible"]))
    details.extend(_exclusions(record.get("exclusion", ())))
    if "change" in record:
        details.append(_change(record["change"]))
    if "stability" in record:
        details.append(_stability(record["stability"]))
    if "fallback-rung" in record:
        details.append(f"fallback rung: {local(record['fallback-rung'])}")
    if record.get("degradation-applied"):
        applied = ", ".join(local(d) for d in record["degradation-applied"])
        details.append(f"degradation applied: {applied}")
    if "handoff-id" in record:
        details.append(f"handoff started: {record['handoff-id']}")
    invalidation = record.get("invalidation")
    if invalidation is not None:
        acted = "acted on" if invalidation.get("acted-on") else "not acted on"
        details.append(f"invalidation: {local(invalidation.get('condition', '?'))}, {acted}")
    if "failure" in record:
        details.extend(_failure(record["failure"]))
    return details


def record_lines(record: Json) -> list[str]:
    """A decision record: the headline, then one indented line per reason."""
    point = local(record.get("trigger") or record.get("decision-point", "?"))
    step = f" step {record['step-id']}" if "step-id" in record else ""
    headline = f"decision {record.get('record-id')} at {point}{step}: {_outcome(record)}"
    return [headline] + ["  " + line for line in _details(record)]
