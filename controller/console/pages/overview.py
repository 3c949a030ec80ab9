"""The overview: services, sites, forwarders, reporting agents and alarms, as tables.

Services and sites come from the CST (service-metrics-op 6.2.1: per CS-ID its instances, per
site its GAS), the forwarders from the C-PS's steering inventory state (ietf-cats-steering
``forwarders``), the agents from the report senders (service-metrics-op 8, 9: last report,
refusals), the alarms from stale or aged-out entries, estimated values and decisions at a
fallback level (6.2.5).
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from controller.console.pages.tables import (
    SM,
    Cell,
    Column,
    Json,
    Row,
    Table,
    bare,
    cell,
    cst_marks,
    entries,
    nst_marks,
    shown,
)

ST = "ietf-cats-steering"
#: What the overview reads (RESTCONF data resources).
RESOURCES = {
    "cst": f"{SM}:computing-service-table",
    "nst": f"{SM}:network-service-table",
    "senders": f"{SM}:report-senders",
    "forwarders": f"{ST}:forwarders",
    "decisions": f"{SM}:selection-decisions",
}
DECISION_FIELDS = "decision(id;time;request;result;fallback-level;csci-id)"
RECENT_ALARMS = 10


def _table(name: str, columns: tuple[Column, ...], rows: list[Row]) -> Table:
    return Table(name, columns, tuple(rows), total=len(rows))


def _plain(*specs: str) -> tuple[Column, ...]:
    return tuple(
        Column(spec.partition("=")[0], spec.partition("=")[2] or spec.partition("=")[0])
        for spec in specs
    )


def services(cst: Json) -> Table:
    """Per CS-ID: instances, usable ones (GAS above 0, not aged out), GAS in all."""
    usable: dict[str, int] = defaultdict(int)
    count: dict[str, int] = defaultdict(int)
    gas: dict[str, Decimal] = defaultdict(Decimal)
    for entry in entries(cst, RESOURCES["cst"]):
        cs_id = str(entry.get("cs-id"))
        count[cs_id] += 1
        gas[cs_id] += Decimal(str(entry.get("gas", 0)))
        usable[cs_id] += int(bool(entry.get("gas")) and not entry.get("aged-out"))
    columns = _plain("cs-id", "instances", "usable", "gas")
    rows = [
        Row(
            cs,
            {
                "cs-id": Cell(cs),
                "instances": Cell(str(count[cs])),
                "usable": Cell(str(usable[cs])),
                "gas": Cell(str(gas[cs])),
            },
        )
        for cs in sorted(count)
    ]
    return _table("services", columns, rows)


def sites(cst: Json) -> Table:
    """Per site: its entries, GAS in all, the healths seen."""
    gas: dict[str, Decimal] = defaultdict(Decimal)
    count: dict[str, int] = defaultdict(int)
    health: dict[str, set[str]] = defaultdict(set)
    for entry in entries(cst, RESOURCES["cst"]):
        site = str(entry.get("site") or entry.get("egress") or "-")
        count[site] += 1
        gas[site] += Decimal(str(entry.get("gas", 0)))
        health[site].add(bare(entry.get("health", "unknown")))
    columns = _plain("site", "entries", "gas", "health")
    rows = [
        Row(
            site,
            {
                "site": Cell(site),
                "entries": Cell(str(count[site])),
                "gas": Cell(str(gas[site])),
                "health": Cell(", ".join(sorted(health[site]))),
            },
        )
        for site in sorted(count)
    ]
    return _table("sites", columns, rows)


FORWARDER_COLUMNS = _plain(
    "name",
    "session",
    "in-sync",
    "intended-services=services",
    "intended-rules=rules",
    "last-push",
    "pushes",
    "failures",
    "last-error",
)


def forwarders(document: Json) -> Table:
    """The forwarders of the inventory: session, sync, rules, last push, failures."""
    rows = []
    for forwarder in entries(document, RESOURCES["forwarders"], "forwarder"):
        state = forwarder.get("state") or {}
        name = str(forwarder.get("name"))
        cells = {c.key: cell(state.get(c.key)) for c in FORWARDER_COLUMNS[1:]}
        rows.append(Row(name, {"name": Cell(name), **cells}))
    return _table("forwarders", FORWARDER_COLUMNS, rows)


SENDER_COLUMNS = _plain(
    "source", "component", "last-report", "last-sequence", "entries", "accepted", "refusals"
)
REFUSALS = (
    "refused-sequence",
    "refused-clock-skew",
    "refused-not-authorized",
    "rate-limited-dropped",
)


def senders(document: Json) -> Table:
    """The agents reporting: last report, reports accepted, reports refused."""
    rows = []
    for sender in entries(document, RESOURCES["senders"], "sender"):
        counters = sender.get("counters") or {}
        refused = sum(int(counters.get(name, 0)) for name in REFUSALS)
        source = str(sender.get("source"))
        cells = {
            "source": Cell(source),
            "component": cell(sender.get("component")),
            "last-report": cell(sender.get("last-report")),
            "last-sequence": cell(sender.get("last-sequence")),
            "entries": cell(sender.get("entries")),
            "accepted": cell(counters.get("reports-accepted")),
            "refusals": Cell(str(refused)),
        }
        rows.append(Row(source, cells))
    return _table("senders", SENDER_COLUMNS, rows)


ALARM_COLUMNS = _plain("kind", "what", "detail")


def alarms(cst: Json, nst: Json, decisions: Json) -> Table:
    """Stale and estimated entries, and the latest decisions at a fallback level."""
    rows = []
    for entry in entries(cst, RESOURCES["cst"]):
        for mark in cst_marks(entry):
            what = f"CST {entry.get('cs-id')} {entry.get('csci-id')}"
            rows.append((mark, what, f"source {shown(entry.get('source'))}"))
    for entry in entries(nst, RESOURCES["nst"]):
        for mark in nst_marks(entry):
            what = f"NST {entry.get('ingress')} -> {entry.get('egress')}"
            rows.append((mark, what, f"source {shown(entry.get('source'))}"))
    fallback = [
        d
        for d in entries(decisions, RESOURCES["decisions"], "decision")
        if bare(d.get("fallback-level", "none")) != "none"
    ][-RECENT_ALARMS:]
    for decision in reversed(fallback):
        request = decision.get("request") or {}
        what = f"decision {decision.get('id')} {request.get('cs-id')} at {request.get('ingress')}"
        detail = f"{bare(decision.get('result'))}, {bare(decision.get('fallback-level'))}"
        rows.append(("fallback", what, f"{detail} at {shown(decision.get('time'))}"))
    shaped = [
        Row(
            f"{kind}:{what}",
            {"kind": Cell(kind), "what": Cell(what), "detail": Cell(detail)},
            (kind,),
        )
        for kind, what, detail in rows
    ]
    return _table("alarms", ALARM_COLUMNS, shaped)
