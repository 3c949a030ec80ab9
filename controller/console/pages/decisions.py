"""Decision records of the joint selection, as the decisions pages show them.

A record (ietf-cats-service-metrics ``selection-decisions/decision``) names its request, its
result and fallback level (service-metrics-op 6.2.5), what decided it (the objective or the
tie-break, 6.2.3 step 6) and every candidate with its metrics and either its rank and score
or the reason it was excluded (6.2.3 steps 2-5). The page lists the candidates ranked first,
then the excluded ones, and draws each one's TST split into its computing and network parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from markupsafe import Markup

from controller.console.pages.charts import Bar, bar_chart
from controller.console.pages.tables import (
    SM,
    Column,
    Json,
    Row,
    Table,
    bare,
    cell,
    entries,
    shown,
)

DECISIONS = f"{SM}:selection-decisions"
#: The leaves of the list page (RFC 8040 4.8.3 ``fields``: the candidates stay on the server).
LIST_FIELDS = (
    "decision(id;time;trigger;request;result;fallback-level;csci-id;egress;"
    "total-service-time;decided-by)"
)
LIMIT = 200


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate as the decision page shows it."""

    csci_id: str
    label: str
    values: dict[str, str]
    rank: int | None
    outcome: str
    excluded: bool


@dataclass(frozen=True, slots=True)
class DecisionView:
    """One decision: its summary lines, candidates and chart."""

    ident: str
    summary: tuple[tuple[str, str], ...]
    candidates: tuple[Candidate, ...]
    chart: Markup


def decision_rows(document: Json, filters: dict[str, str]) -> list[Json]:
    """The decisions (newest first) that match every filter (cs-id, ingress, result,
    fallback-level, trigger), at most :data:`LIMIT`."""
    rows = []
    for record in reversed(entries(document, DECISIONS, "decision")):
        request = record.get("request") or {}
        values = {
            "cs-id": str(request.get("cs-id", "")),
            "ingress": str(request.get("ingress", "")),
            "result": bare(record.get("result", "")),
            "fallback-level": bare(record.get("fallback-level", "")),
            "trigger": bare(record.get("trigger", "")),
        }
        if all(not wanted or values.get(k) == wanted for k, wanted in filters.items()):
            rows.append({**record, **values, "tst": shown(record.get("total-service-time"))})
        if len(rows) >= LIMIT:
            break
    return rows


LIST_COLUMNS = (
    Column("id", "id", numeric=True),
    Column("time", "time"),
    Column("trigger", "trigger"),
    Column("cs-id", "cs-id"),
    Column("ingress", "ingress"),
    Column("result", "result"),
    Column("fallback-level", "fallback-level"),
    Column("csci-id", "csci-id"),
    Column("egress", "egress"),
    Column("tst", "total-service-time ms", numeric=True),
    Column("decided-by", "decided-by"),
)


def decision_table(rows: list[Json]) -> Table:
    """The decision list as a table, each row linking to its decision's page."""
    shaped = []
    for record in rows:
        ident = str(record.get("id", ""))
        cells = {c.key: cell(record.get(c.key)) for c in LIST_COLUMNS}
        marks = ("fallback",) if record.get("fallback-level") not in ("", "none") else ()
        shaped.append(Row(ident, cells, marks, link=f"/decisions/{ident}"))
    return Table("decisions", LIST_COLUMNS, tuple(shaped), total=len(shaped))


def _outcome(candidate: Json) -> str:
    reason = candidate.get("reason")
    if reason is not None:
        detail = f" ({candidate['detail']})" if candidate.get("detail") else ""
        return f"excluded: {bare(reason)}{detail}"
    soft = candidate.get("violated-soft-constraint") or []
    extra = f"; violates {', '.join(bare(s) for s in soft)}" if soft else ""
    return f"rank {candidate.get('rank', '-')}, score {candidate.get('score', '-')}{extra}"


CANDIDATE_FIELDS = (
    "egress",
    "gas",
    "computing-time",
    "network-delay",
    "total-service-time",
    "price",
    "health",
)


def _candidate(candidate: Json, labels: dict[str, str]) -> Candidate:
    csci_id = str(candidate.get("csci-id", ""))
    values = {name: shown(candidate.get(name)) for name in CANDIDATE_FIELDS}
    estimated = candidate.get("estimated-metric") or []
    values["estimated"] = ", ".join(bare(m) for m in estimated) or "-"
    rank = candidate.get("rank")
    return Candidate(
        csci_id,
        labels.get(csci_id, csci_id),
        values,
        int(rank) if rank is not None else None,
        _outcome(candidate),
        candidate.get("reason") is not None,
    )


def _order(candidate: Candidate) -> tuple[int, int, str]:
    return (1 if candidate.excluded else 0, candidate.rank or 0, candidate.csci_id)


def _bar(candidate: Json, shown_as: Candidate) -> Bar:
    parts: list[tuple[str, Decimal]] = []
    for name, key in (("computing", "computing-time"), ("network", "network-delay")):
        if candidate.get(key) is not None:
            parts.append((name, Decimal(str(candidate[key]))))
    reason = candidate.get("reason")  # its detail is in the table: the note must fit the chart
    note = f"excluded: {bare(reason)}" if reason is not None else f"rank {shown_as.rank}"
    return Bar(shown_as.label, tuple(parts), note, shown_as.csci_id)


def _requirement(record: Json) -> str:
    requirement = record.get("requirement") or {}
    hard = requirement.get("hard-constraints") or {}
    parts = [f"{k} {shown(v)}" for k, v in hard.items()]
    objectives = requirement.get("objective") or []
    if objectives:
        parts.append("objectives " + ", ".join(bare(o) for o in objectives))
    return "; ".join(parts) or "-"


def decision_view(document: Json, labels: dict[str, str] | None = None) -> DecisionView | None:
    """The page of one decision (None when the reply holds none)."""
    found = [d for d in document.get(f"{SM}:decision", []) if isinstance(d, dict)]
    if not found:
        return None
    record: dict[str, Any] = found[0]
    names = labels or {}
    raw = [c for c in record.get("candidate", []) if isinstance(c, dict)]
    candidates = sorted((_candidate(c, names) for c in raw), key=_order)
    by_id = {c.csci_id: c for c in candidates}
    bars = [_bar(c, by_id[str(c.get("csci-id", ""))]) for c in raw]
    bars.sort(key=lambda bar: _order(by_id[bar.key]))
    request = record.get("request") or {}
    chosen = str(record.get("csci-id", ""))
    summary = (
        ("service", f"{request.get('cs-id', '-')} at ingress {request.get('ingress', '-')}"),
        ("time", shown(record.get("time"))),
        ("trigger", shown(record.get("trigger"))),
        ("result", shown(record.get("result"))),
        ("selected", f"{names.get(chosen, chosen) or '-'} via {shown(record.get('egress'))}"),
        ("total service time ms", shown(record.get("total-service-time"))),
        ("fallback level", shown(record.get("fallback-level"))),
        ("decided by", shown(record.get("decided-by"))),
        ("deciding objective", shown(record.get("deciding-objective"))),
        ("deciding tie-break", shown(record.get("deciding-tie-break"))),
        ("requirement", _requirement(record)),
        ("estimated metrics", shown(record.get("estimated-metric"))),
    )
    chart = bar_chart(
        bars,
        ("computing", "network"),
        title=f"Total service time of each candidate of decision {record.get('id')}",
        unit="ms",
    )
    return DecisionView(str(record.get("id", "")), summary, tuple(candidates), chart)
