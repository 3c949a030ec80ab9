"""What each page reads from the C-PS, as the logged-in user, shaped into tables.

The views and the live relay share these, so a live update shows exactly what a reload
would. ``args`` is the page's query (sort, filter, service).
"""

from __future__ import annotations

from collections.abc import Mapping

from controller.console.cps import Cps
from controller.console.pages import decisions as decided
from controller.console.pages import overview as shape
from controller.console.pages.tables import SM, Table, arrange, cst_table, nst_table

TABLES = {
    "cst": (f"{SM}:computing-service-table", cst_table, "Computing Service Table"),
    "nst": (f"{SM}:network-service-table", nst_table, "Network Service Table"),
}
DECISION_FILTERS = ("cs-id", "ingress", "result", "fallback-level", "trigger")


def overview_tables(client: Cps) -> list[Table]:
    """Services, sites, forwarders, reporting agents and alarms."""
    cst = client.read_members(shape.RESOURCES["cst"])
    nst = client.read_members(shape.RESOURCES["nst"])
    decisions = client.read_members(shape.RESOURCES["decisions"], fields=shape.DECISION_FIELDS)
    return [
        shape.services(cst),
        shape.sites(cst),
        shape.forwarders(client.read_members(shape.RESOURCES["forwarders"])),
        shape.senders(client.read_members(shape.RESOURCES["senders"])),
        shape.alarms(cst, nst, decisions),
    ]


def service_table(client: Cps, name: str, args: Mapping[str, str]) -> Table:
    """The CST or the NST, arranged as ``args`` ask (sort, dir, q, marked)."""
    resource, shaped, _ = TABLES[name]
    return arrange(
        shaped(client.read_members(resource)),
        args.get("sort", ""),
        descending=args.get("dir") == "desc",
        query=args.get("q", ""),
        marked=args.get("marked", ""),
    )


def decision_filters(args: Mapping[str, str]) -> dict[str, str]:
    """The decision list's filters in ``args`` (every one, empty when not given)."""
    return {name: args.get(name, "").strip() for name in DECISION_FILTERS}


def decision_table(client: Cps, args: Mapping[str, str]) -> Table:
    """The kept decisions, newest first, filtered."""
    document = client.read_members(decided.DECISIONS, fields=decided.LIST_FIELDS)
    wanted = {k: v for k, v in decision_filters(args).items() if v}
    return decided.decision_table(decided.decision_rows(document, wanted))


def page_tables(page: str, client: Cps, args: Mapping[str, str]) -> list[Table]:
    """The tables of a live page."""
    if page == "overview":
        return overview_tables(client)
    if page in TABLES:
        return [service_table(client, page, args)]
    if page == "decisions":
        return [decision_table(client, args)]
    return []
