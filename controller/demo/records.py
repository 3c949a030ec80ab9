"""Stage G's reading of an agent session (agent-selection-mapping 6.5, 8.3, 8.4): its decision
records and commitment as tables, and every way they differ from the step-30 episode.

Values in, lines and problems out: a session is the C-PS's ``sessions/session`` entry (RFC
7951), a rule a forwarder's ``steering/rule`` entry. The C-PS shows reuse keys as
tenant-scoped handles (section 15), so the working set is named by the elements the gateway
announced (class and size).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

from controller.demo.table import grid
from controller.types import Json

KEPT, MOVED = "keep", "move"
TRANSFER_S = (Decimal(2900), Decimal(3100))  # 6.8: 7.5 GB at 2.5 GB/s plus the rtt, ~3.0 s
RECOMPUTE_MS = Decimal(128_000)  # 6.8: 128k tokens of context at 1,000 tokens/s
TRUNCATED = "truncated-working-set"


def local(identity: object) -> str:
    """``module:name`` -> ``name``; ``-`` for nothing."""
    return "-" if identity is None else str(identity).rpartition(":")[2]


def _ms(value: object) -> str:
    """A milliseconds value as printed (``-`` when absent)."""
    if value is None:
        return "-"
    number = Decimal(str(value))
    return f"{number.normalize():f}" if number == number.to_integral() else f"{number:.1f}"


def _bytes(value: object) -> str:
    size = Decimal(str(value or 0))
    for unit, scale in (("GB", Decimal(10**9)), ("MB", Decimal(10**6))):
        if size >= scale:
            return f"{(size / scale).normalize():f} {unit}"
    return f"{size.normalize():f} B"


def point(record: Json) -> str:
    """The trigger, or the decision point, of a record."""
    return local(record.get("trigger") or record.get("decision-point"))


Names = Mapping[str, str]  # CSCI-ID -> the draft's name


def _name(names: Names, csci_id: object) -> str:
    return names.get(str(csci_id), str(csci_id))


def reasons(record: Json, names: Names) -> list[str]:
    """Why a record decided as it did, one short clause each (6.5, 8.3, 8.4)."""
    eligible = ", ".join(_name(names, c) for c in record.get("eligible", []))
    found = [f"eligible {eligible or 'none'}"]
    found += [
        f"excluded {_name(names, e.get('csci-id'))}: {local(e.get('reason'))}"
        for e in record.get("exclusion", [])
    ]
    costs = [
        f"{_name(names, c.get('csci-id'))} {_ms(c.get('valuation', {}).get('state-cost'))} ms"
        for c in record.get("candidate", [])
    ]
    if costs:
        found.append("state cost " + ", ".join(costs))
    change = record.get("change", {})
    if change.get("from") is not None:
        moving = f"{_name(names, change['from'])} -> {_name(names, change.get('to'))}"
        found.append(
            f"moving {moving} costs {_ms(change.get('cost'))} ms "
            f"for {change.get('gain-time', '-')} s gained over {change.get('horizon-steps', 0)} "
            f"steps (net {change.get('gain', '-')} s)"
        )
    stability = record.get("stability", {})
    if stability.get("applied"):
        found.append("held by the stability rules (8.3)")
    if stability.get("step-in-flight"):
        found.append("step in flight: no move on a preference")
    invalidation = record.get("invalidation")
    if invalidation is not None:
        acted = "acted on" if invalidation.get("acted-on") else "not acted on"
        found.append(f"{local(invalidation.get('condition'))} {acted}")
    if "fallback-rung" in record:
        found.append(f"fallback rung {local(record['fallback-rung'])}")
    if record.get("degradation-applied"):
        applied = ", ".join(local(d) for d in record["degradation-applied"])
        found.append(f"degradation applied: {applied}")
    if "handoff-id" in record:
        found.append(f"handoff {record['handoff-id']}")
    return found


def decision_table(records: Sequence[Json], names: Names) -> list[str]:
    """One row per decision record, its reasons on continuation rows."""
    rows: list[list[str]] = []
    for record in records:
        why = reasons(record, names)
        rows.append(
            [
                str(record.get("record-id", "-")),
                point(record),
                str(record.get("step-id", "-")),
                local(record.get("outcome")),
                _name(names, record.get("selected", "-")),
                why[0],
            ]
        )
        rows += [["", "", "", "", "", clause] for clause in why[1:]]
    return grid(["#", "decision point", "step", "outcome", "candidate", "why"], rows)


def valuation(record: Json, csci_id: str) -> Json:
    """A candidate's valuation in a record (empty when it has none)."""
    candidates: list[Json] = record.get("candidate", [])
    entry = next((c for c in candidates if c.get("csci-id") == csci_id), {})
    found: Json = entry.get("valuation", {})
    return found


def valuation_table(record: Json, free: Mapping[str, float], names: Names) -> list[str]:
    """Each candidate of a record: advertised free capacity, expected forwarding and computing
    time, the state it lacks, transfer and recompute time, state cost (min of both, M49)."""
    rows = []
    for entry in record.get("candidate", []):
        csci_id = str(entry.get("csci-id"))
        v = entry.get("valuation", {})
        capacity = free.get(csci_id)
        rows.append(
            [
                _name(names, csci_id)
                + (" (selected)" if csci_id == record.get("selected") else ""),
                "-" if capacity is None else f"{capacity:.1f}",
                _ms(v.get("forwarding", {}).get("expected-time")),
                _ms(v.get("computing", {}).get("expected-time")),
                _bytes(v.get("state-bytes")),
                _ms(v.get("transfer-time")),
                _ms(v.get("recompute-time")),
                _ms(v.get("state-cost")),
                str(v.get("suitability", "-")),
            ]
        )
    header = [
        "candidate",
        "free capacity",
        "forwarding ms",
        "computing ms",
        "state to place",
        "transfer ms",
        "recompute ms",
        "state cost ms",
        "suitability",
    ]
    return grid(header, rows)


def named(elements: Iterable[Json], announced: Iterable[Json]) -> list[str]:
    """The reuse keys of the elements the C-PS shows, named by the announced element of the
    same class and size."""
    by_shape = {(e.get("element-class"), str(e.get("element-size"))): e for e in announced}
    names = []
    for element in elements:
        found = by_shape.get((element.get("element-class"), str(element.get("element-size"))))
        names.append("?" if found is None else str(found.get("reuse-key")))
    return names


def working_set_lines(session: Json, announced: Sequence[Json]) -> list[str]:
    """The session's working set as kept, and what was left behind."""
    shown = session.get("descriptor", {}).get("working-set", {}).get("element", [])
    kept = named(shown, announced)
    rows = [
        [
            str(e.get("reuse-key")),
            local(e.get("element-class")),
            _bytes(e.get("element-size")),
            "no" if e.get("sufficient") is False else "yes",
            "kept" if e.get("reuse-key") in kept else "left behind",
        ]
        for e in announced
    ]
    return grid(["element", "class", "size", "sufficient", "after the tail event"], rows)


def _records(session: Json) -> list[Json]:
    found: list[Json] = session.get("decision-record", [])
    return found


def record_at(session: Json, name: str) -> Json | None:
    """The last record of a session at this trigger or decision point."""
    return next((r for r in reversed(_records(session)) if point(r) == name), None)


def _is(what: str, got: object, wanted: object) -> list[str]:
    return [] if got == wanted else [f"{what} is {got}, expected {wanted}"]


def admission_problems(session: Json, chosen: str) -> list[str]:
    """P0: the session is admitted at ``chosen`` with nothing excluded, and committed there."""
    record = record_at(session, "dp1-session-admission")
    if record is None:
        return ["no admission decision recorded"]
    commitments = {c.get("commitment-id"): c for c in session.get("commitment", [])}
    current = commitments.get(session.get("current-commitment"), {})
    return [
        *_is("the admission's candidate", record.get("selected"), chosen),
        *_is("the admission's exclusions", record.get("exclusion", []), []),
        *_is("the commitment's instance", current.get("csci-id"), chosen),
    ]


def boundary_problems(record: Json | None, kept: str, other: str) -> list[str]:
    """Step 30 (8.4, 6.8): ``kept`` is kept although ``other`` computes faster; moving would
    place the state at ``other`` by transfer (~3.0 s), not by recompute (>= 128 s); the state
    fits at ``kept`` (nothing to place)."""
    if record is None:
        return ["no decision recorded at the step-30 boundary"]
    mine, theirs = valuation(record, kept), valuation(record, other)
    problems = [
        *_is("the step-30 outcome", local(record.get("outcome")), KEPT),
        *_is("the step-30 candidate", record.get("selected"), kept),
        *_is(f"the state to place at {kept}", mine.get("state-bytes"), "0"),
    ]
    faster = Decimal(str(theirs.get("computing", {}).get("expected-time", "inf")))
    if not faster < Decimal(str(mine.get("computing", {}).get("expected-time", "0"))):
        problems.append(f"{other} does not compute faster than {kept}: nothing to resist")
    transfer = Decimal(str(theirs.get("transfer-time", "0")))
    recompute = Decimal(str(theirs.get("recompute-time", "0")))
    if not TRANSFER_S[0] <= transfer <= TRANSFER_S[1]:
        problems.append(f"the transfer to {other} takes {transfer} ms, not about 3.0 s")
    if recompute < RECOMPUTE_MS:
        problems.append(f"recomputing at {other} takes {recompute} ms, under 128 s")
    if Decimal(str(theirs.get("state-cost", "-1"))) != min(transfer, recompute):
        problems.append(f"{other}'s state cost is not min(transfer, recompute)")
    return problems


def tail_problems(
    record: Json | None, session: Json, kept: str, announced: Sequence[Json]
) -> list[str]:
    """T8 (8.4): the overrun is a tail event acted on; the session stays at ``kept`` with the
    reduced retrieval set (only the elements not marked insufficient), no migration."""
    if record is None:
        return ["no decision recorded for the tail event"]
    invalidation = record.get("invalidation", {})
    shown = session.get("descriptor", {}).get("working-set", {}).get("element", [])
    wanted = sorted(str(e.get("reuse-key")) for e in announced if e.get("sufficient") is not False)
    applied = [local(d) for d in record.get("degradation-applied", [])]
    problems = [
        *_is("the tail event's outcome", local(record.get("outcome")), KEPT),
        *_is("the tail event's candidate", record.get("selected"), kept),
        *_is("the degradation applied", applied, [TRUNCATED]),
        *_is("the working set kept", sorted(named(shown, announced)), wanted),
    ]
    if invalidation.get("acted-on") is not True:
        problems.append("the overrun was not acted on as a tail event")
    if "handoff" in session or any(local(r.get("outcome")) == MOVED for r in _records(session)[1:]):
        problems.append("the session was migrated")
    return problems


def consumed(session: Json, turn_id: int, step_id: int) -> dict[str, Decimal]:
    """What the accounting shows consumed for one step, by dimension."""
    turns: list[Json] = session.get("accounting", {}).get("turn", [])
    turn = next((t for t in turns if t.get("turn-id") == turn_id), {})
    steps: list[Json] = turn.get("step", [])
    step = next((s for s in steps if s.get("step-id") == step_id), {})
    return {
        local(b.get("dimension")): Decimal(str(b.get("consumed"))) for b in step.get("budget", [])
    }


def rule_row(rule: Json, names: Names) -> list[str]:
    """A steering rule as printed: commitment, service, session and steps, instance, egress,
    lifetime, its state at the forwarder."""
    match = rule.get("match", {})
    steps = f"{match.get('first-step', '-')}-{match.get('last-step', '')}".rstrip("-")
    csci_id = str(rule.get("csci-id"))
    return [
        str(rule.get("commitment-id")),
        str(rule.get("cs-id")),
        f"{match.get('session-id')} steps {steps}",
        f"{_name(names, csci_id)} {csci_id}",
        str(rule.get("egress-forwarder")),
        f"{rule.get('lifetime', '-')} s",
        str(rule.get("counters", {}).get("state", "-")),
    ]


RULE_HEADER = ["commitment", "CS-ID", "match", "CSCI-ID", "egress", "lifetime", "state"]


def amounts(spent: Mapping[str, Decimal]) -> str:
    """Consumption as printed: ``time 4600 ms, tokens 2400``."""
    units = {"time": " ms"}
    return ", ".join(f"{k} {_ms(v)}{units.get(k, '')}" for k, v in spent.items()) or "none"


def rule_problems(rules: Sequence[Json], session: Json, egress: str) -> list[str]:
    """The commitment in force is one rule: its id, the session's committed steps, its
    instance and the egress the instance is attached to."""
    if len(rules) != 1:
        return [f"{len(rules)} rules for the session, expected 1"]
    (rule,) = rules
    commitments = {c.get("commitment-id"): c for c in session.get("commitment", [])}
    current = commitments.get(session.get("current-commitment"), {})
    steps = current.get("steps", {})
    match = rule.get("match", {})
    return [
        *_is("the rule's commitment", rule.get("commitment-id"), session.get("current-commitment")),
        *_is("the rule's instance", rule.get("csci-id"), current.get("csci-id")),
        *_is("the rule's egress", rule.get("egress-forwarder"), egress),
        *_is("the rule's session", match.get("session-id"), session.get("session-id")),
        *_is(
            "the rule's steps",
            (str(match.get("first-step")), str(match.get("last-step"))),
            (str(steps.get("first")), str(steps.get("last"))),
        ),
        *_is("the rule's state at the forwarder", rule.get("counters", {}).get("state"), "active"),
    ]


def close_problems(
    session: Json, before: int, spent: Mapping[str, Decimal], wanted: Mapping[str, Decimal]
) -> list[str]:
    """DP10: the session is closed with no new decision (it had ``before`` records) and the
    accounting shows the step's reported consumption (P11, M38)."""
    problems = _is("the session's state", session.get("state"), "closed")
    if len(_records(session)) != before:
        problems.append(f"the close added {len(_records(session)) - before} decision records")
    return problems + _is("the step's consumption", dict(spent), dict(wanted))
