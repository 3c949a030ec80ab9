"""The configuration page: the running policy, the commit history, diffs.

The history is cats-controller-admin's ``commits`` (newest first); a comparison or a rollback
answers a unified diff, shown line by line as added, removed or context.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from controller.console.pages.tables import SM, Column, Json, Row, Table, cell, entries

ADMIN = "cats-controller-admin"
#: The running policy as the page shows it: the C-PS's selection policy and its inputs.
POLICY = (
    f"{SM}:selection-policy",
    f"{SM}:update-control",
    f"{SM}:plausibility",
    f"{SM}:csci-attachments",
    "ietf-cats-steering:forwarders",
)
HISTORY_COLUMNS = (
    Column("id", "id", numeric=True),
    Column("time", "time"),
    Column("user", "user"),
    Column("transport", "transport"),
    Column("operation", "operation"),
    Column("edits", "edits", numeric=True),
    Column("label", "label"),
    Column("comment", "comment"),
)


@dataclass(frozen=True, slots=True)
class DiffLine:
    """A line of a unified diff and its kind: add, remove, hunk, file or context."""

    text: str
    kind: str


def history(document: Json) -> Table:
    """The commits of running, newest first."""
    rows = []
    for commit in entries(document, f"{ADMIN}:commits", "commit"):
        ident = str(commit.get("id", ""))
        cells = {c.key: cell(commit.get(c.key)) for c in HISTORY_COLUMNS}
        rows.append(Row(ident, cells))
    rows.sort(key=lambda row: -int(row.key) if row.key.isdigit() else 0)
    return Table("commits", HISTORY_COLUMNS, tuple(rows), total=len(rows))


def latest_commit(document: Json) -> str:
    """The newest commit's id ("" when none is kept)."""
    table = history(document)
    return table.rows[0].key if table.rows else ""


def diff_lines(result: Json) -> list[DiffLine]:
    """A compare or rollback result's unified diff, line by line."""
    lines = []
    for text in str(result.get("unified-diff", "")).splitlines():
        if text.startswith(("+++", "---")):
            kind = "file"
        elif text.startswith("@@"):
            kind = "hunk"
        elif text.startswith("+"):
            kind = "add"
        elif text.startswith("-"):
            kind = "remove"
        else:
            kind = "context"
        lines.append(DiffLine(text, kind))
    return lines


def policy_text(documents: list[Json]) -> str:
    """The running policy as indented RFC 7951 JSON (what the user may read of it)."""
    merged: Json = {}
    for document in documents:
        merged.update(document)
    return json.dumps(merged, indent=2, sort_keys=False) if merged else "(none readable)"
