"""Tables of the console: rows of cells shaped from RFC 7951 data, sorted and filtered.

Pure functions of the data the C-PS returned. Every cell has a stable id (table, row key,
column), so a live update replaces its text in place (no row moves, no layout shift). The CST
and NST keep each value's age and source (service-metrics-op 5, 6.2.1, 6.2.2), and mark what
is stale, aged out or estimated (an unmeasured Computing Time, ietf-cats-service-metrics
``confidence estimated``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

SM = "ietf-cats-service-metrics"
Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Column:
    """A column: its key (the YANG leaf's name), its header (with the unit), whether it
    holds a number, and whether it is an age (ticking in the browser)."""

    key: str
    title: str
    numeric: bool = False
    age: bool = False


@dataclass(frozen=True, slots=True)
class Cell:
    """A shown value; ``age_ms`` for an age cell; ``full`` the value in full when the text
    is shortened (a time of day for a date-and-time)."""

    text: str
    age_ms: int | None = None
    full: str | None = None


TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T(\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def cell(value: object) -> Cell:
    """A leaf as a table cell: as :func:`shown`, a yang:date-and-time as its UTC time of
    day (ISO 8601, ``03:29:12Z``) with the whole value kept for a tooltip."""
    text = shown(value)
    found = TIMESTAMP.match(text)
    if found is None:
        return Cell(text)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    return Cell(moment.strftime("%H:%M:%SZ"), full=text)


@dataclass(frozen=True, slots=True)
class Row:
    """A row: its key, its cells by column, its marks (stale, estimated, ...) and a link."""

    key: str
    cells: dict[str, Cell]
    marks: tuple[str, ...] = ()
    link: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """A table as shown: its name (the cell ids' prefix), columns, rows and arrangement."""

    name: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    sort: str = ""
    descending: bool = False
    query: str = ""
    marked: str = ""
    total: int = 0


def bare(value: object) -> str:
    """An identity without its module (``ietf-cats-types:healthy`` -> ``healthy``)."""
    text = str(value)
    return text.split(":", 1)[1] if ":" in text and text.split(":", 1)[0].islower() else text


def shown(value: object) -> str:
    """A leaf as printed: ``-`` when absent (never 0), identities bare, booleans words."""
    if value is None or value in ([], {}, ""):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(shown(item) for item in value)
    return bare(value)


def age_text(ms: int) -> str:
    """An age as read at a glance (the browser's ticking uses the same steps)."""
    seconds = ms / 1000
    if seconds < 10:  # noqa: PLR2004
        return f"{seconds:.1f} s"
    if seconds < 120:  # noqa: PLR2004
        return f"{int(seconds)} s"
    if seconds < 7200:  # noqa: PLR2004
        return f"{int(seconds // 60)} min"
    return f"{int(seconds // 3600)} h"


def cell_id(table: str, row: str, column: str) -> str:
    """The id of a cell in the page (no spaces: ids may hold any other character)."""
    return f"{table}|{row}|{column}".replace(" ", "_")


def entries(document: Json, container: str, name: str = "entry") -> list[Json]:
    """The list entries of a top-level container of a RESTCONF reply."""
    top = document.get(container) or {}
    found = top.get(name, []) if isinstance(top, dict) else []
    return [e for e in found if isinstance(e, dict)]


def _age(entry: Json) -> Cell:
    raw = entry.get("age")
    if raw is None:
        return Cell("-")
    ms = int(Decimal(str(raw)))
    return Cell(age_text(ms), ms)


def _cells(entry: Json, columns: Sequence[Column]) -> dict[str, Cell]:
    return {c.key: _age(entry) if c.age else cell(entry.get(c.key)) for c in columns}


CST_COLUMNS = (
    Column("cs-id", "cs-id"),
    Column("csci-id", "csci-id"),
    Column("site", "site"),
    Column("egress", "egress"),
    Column("gas", "gas", numeric=True),
    Column("computing-time", "computing-time ms", numeric=True),
    Column("price", "price", numeric=True),
    Column("health", "health"),
    Column("source", "source"),
    Column("confidence", "confidence"),
    Column("age", "age", numeric=True, age=True),
    Column("marks", "marks"),
)

NST_COLUMNS = (
    Column("ingress", "ingress"),
    Column("egress", "egress"),
    Column("network-delay", "network-delay ms", numeric=True),
    Column("jitter", "jitter ms", numeric=True),
    Column("bandwidth", "bandwidth Mbps", numeric=True),
    Column("loss-rate", "loss-rate ppm", numeric=True),
    Column("source", "source"),
    Column("confidence", "confidence"),
    Column("age", "age", numeric=True, age=True),
    Column("marks", "marks"),
)


def cst_marks(entry: Json) -> tuple[str, ...]:
    """What an operator must notice about a CST entry."""
    marks = []
    if entry.get("aged-out"):
        marks.append("stale")
    if bare(entry.get("confidence", "")) == "estimated":
        marks.append("estimated")
    marks += [bare(flag) for flag in (entry.get("observed") or {}).get("flag", [])]
    return tuple(marks)


def nst_marks(entry: Json) -> tuple[str, ...]:
    """What an operator must notice about an NST entry."""
    marks = ["stale"] if entry.get("stale") else []
    if bare(entry.get("confidence", "")) == "estimated":
        marks.append("estimated")
    if (entry.get("path-attributes") or {}).get("anomalous"):
        marks.append("anomalous")
    return tuple(marks)


def _rows(
    items: Iterable[Json],
    columns: Sequence[Column],
    key: Callable[[Json], str],
    marks: Callable[[Json], tuple[str, ...]],
) -> tuple[Row, ...]:
    rows = []
    for entry in items:
        found = marks(entry)
        cells = _cells(entry, columns) | {"marks": Cell(", ".join(found) or "-")}
        rows.append(Row(key(entry), cells, found))
    return tuple(rows)


def cst_table(document: Json) -> Table:
    """The Computing Service Table (service-metrics-op 6.2.1)."""
    items = entries(document, f"{SM}:computing-service-table")
    rows = _rows(items, CST_COLUMNS, lambda e: f"{e.get('cs-id')}/{e.get('csci-id')}", cst_marks)
    return Table("cst", CST_COLUMNS, rows, total=len(rows))


def nst_table(document: Json) -> Table:
    """The Network Service Table (service-metrics-op 6.2.2)."""
    items = entries(document, f"{SM}:network-service-table")
    rows = _rows(items, NST_COLUMNS, lambda e: f"{e.get('ingress')}/{e.get('egress')}", nst_marks)
    return Table("nst", NST_COLUMNS, rows, total=len(rows))


def _sort_key(row: Row, column: Column) -> tuple[int, Decimal, str]:
    found = row.cells.get(column.key, Cell("-"))
    if found.text == "-":
        return (1, Decimal(0), "")  # absent values last, whichever the direction
    if column.age and found.age_ms is not None:
        return (0, Decimal(found.age_ms), "")
    if column.numeric:
        try:
            return (0, Decimal(found.text), "")
        except InvalidOperation:
            pass
    return (0, Decimal(0), (found.full or found.text).lower())


def arrange(
    table: Table, sort: str = "", *, descending: bool = False, query: str = "", marked: str = ""
) -> Table:
    """The table filtered (every word of ``query`` in some cell; ``marked`` among the row's
    marks) and sorted by the column ``sort`` (absent values last)."""
    words = query.lower().split()
    rows = [
        row
        for row in table.rows
        if all(any(w in c.text.lower() for c in row.cells.values()) for w in words)
        and (not marked or marked in row.marks)
    ]
    column = next((c for c in table.columns if c.key == sort), None)
    if column is not None:
        present = [r for r in rows if r.cells.get(column.key, Cell("-")).text != "-"]
        absent = [r for r in rows if r.cells.get(column.key, Cell("-")).text == "-"]
        present.sort(key=lambda r: _sort_key(r, column), reverse=descending)
        rows = present + absent
    return replace(
        table,
        rows=tuple(rows),
        sort=column.key if column else "",
        descending=descending,
        query=query,
        marked=marked,
    )


def live_cells(table: Table) -> tuple[dict[str, str], dict[str, int]]:
    """Every cell's text by id, and every age cell's age (ms) by id, for a live update."""
    texts: dict[str, str] = {}
    ages: dict[str, int] = {}
    for row in table.rows:
        for key, value in row.cells.items():
            ident = cell_id(table.name, row.key, key)
            if value.age_ms is not None:
                ages[ident] = value.age_ms
            else:
                texts[ident] = value.text
    return texts, ages
