"""What ``catsctl show`` prints: aligned tables with the YANG leaves' names as headers.

Each view names a data resource, the list whose entries are rows (``a/b[]`` walks lists; a row
of a nested list keeps its parent's leaves as ``parent/leaf``), and its columns (a leaf's path
in the row, the header with the unit). Identities print without their module; an absent value
prints as ``-`` (never 0); times are the UTC RFC 3339 the server reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from controller.demo.table import grid


@dataclass(frozen=True, slots=True)
class Column:
    """One column: the leaf's path in a row, and its header (with the unit)."""

    path: str
    header: str = ""

    @property
    def title(self) -> str:
        """The header: the leaf's name unless given."""
        return self.header or self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class View:
    """A ``show`` target."""

    resource: str  # the data resource (RESTCONF path under /data)
    rows: str  # the lists to walk from the resource's top node: "entry", "session[]/commitment"
    columns: tuple[Column, ...]


def _c(*specs: str) -> tuple[Column, ...]:
    columns = []
    for spec in specs:
        path, _, header = spec.partition("=")
        columns.append(Column(path, header))
    return tuple(columns)


SM = "ietf-cats-service-metrics"
VIEWS: dict[str, View] = {
    "cst": View(
        f"{SM}:computing-service-table",
        "entry",
        _c(
            "cs-id",
            "csci-id",
            "egress",
            "gas",
            "computing-time=computing-time ms",
            "price",
            "reputation",
            "security-level",
            "health",
            "site",
        ),
    ),
    "nst": View(
        f"{SM}:network-service-table",
        "entry",
        _c(
            "ingress",
            "egress",
            "network-delay=network-delay ms",
            "jitter=jitter ms",
            "bandwidth",
            "loss-rate",
        ),
    ),
    "decisions": View(
        f"{SM}:selection-decisions",
        "decision",
        _c(
            "id",
            "time",
            "trigger",
            "request/cs-id=cs-id",
            "request/ingress=ingress",
            "result",
            "fallback-level",
            "csci-id",
            "egress",
            "total-service-time=total-service-time ms",
        ),
    ),
    "forwarders": View(
        "ietf-cats-steering:forwarders",
        "forwarder",
        _c(
            "name",
            "state/session=session",
            "state/in-sync=in-sync",
            "state/pending-changes=pending-changes",
            "state/intended-services=services",
            "state/intended-rules=rules",
            "state/pushes=pushes",
            "state/failures=failures",
            "state/last-push=last-push",
            "state/last-error=last-error",
        ),
    ),
    "rules": View(
        "ietf-cats-agent-selection:agent-selection/sessions",
        "session[]/commitment",
        _c(
            "session/session-id=session-id",
            "commitment-id",
            "csci-id",
            "state",
            "steps",
            "expires-at",
        ),
    ),
    "sessions": View(
        "ietf-cats-agent-selection:agent-selection/sessions",
        "session",
        _c(
            "session-id",
            "tenant",
            "service-id",
            "state",
            "current-step",
            "current-commitment",
            "admitted-at",
            "last-activity",
        ),
    ),
    "senders": View(
        f"{SM}:report-senders",
        "sender",
        _c(
            "source",
            "component",
            "last-sequence",
            "last-report",
            "entries",
            "counters/reports-accepted=accepted",
            "counters/refused-sequence=refused-sequence",
            "counters/refused-clock-skew=refused-clock-skew",
            "counters/rate-limited-dropped=rate-limited",
        ),
    ),
    "commits": View(
        "cats-controller-admin:commits",
        "commit",
        _c(
            "id",
            "time",
            "user",
            "transport",
            "source-address=source",
            "operation",
            "edits",
            "label",
            "comment",
        ),
    ),
}


def _top(document: Any) -> Any:
    """The one top-level member of a RESTCONF reply (``{"module:node": ...}``)."""
    if isinstance(document, dict) and len(document) == 1:
        return next(iter(document.values()))
    return document


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _unqualified(key: str) -> str:
    return key.split(":", 1)[-1]


def rows_of(document: Any, rows: str) -> Iterator[dict[str, Any]]:
    """The row objects of a view; a nested list's rows carry ``parent/leaf`` of its parent."""
    node = _top(document)
    yield from _walk([({}, node)], rows.split("/"))


def _walk(items: list[tuple[dict[str, Any], Any]], steps: list[str]) -> Iterator[dict[str, Any]]:
    if not steps:
        for inherited, node in items:
            if isinstance(node, dict):
                yield {**inherited, **{_unqualified(k): v for k, v in node.items()}}
        return
    name = steps[0].removesuffix("[]")
    following: list[tuple[dict[str, Any], Any]] = []
    for inherited, node in items:
        if not isinstance(node, dict):
            continue
        children = {_unqualified(k): v for k, v in node.items()}.get(name)
        for child in _as_list(children):
            scalars = {
                f"{name}/{_unqualified(k)}": v
                for k, v in (child.items() if isinstance(child, dict) and steps[1:] else ())
                if not isinstance(v, dict | list)
            }
            following.append(({**inherited, **scalars}, child))
    yield from _walk(following, steps[1:])


def cell(row: dict[str, Any], path: str) -> str:
    """A row's value at ``path`` as printed."""
    if path in row:
        value: Any = row[path]
    else:
        value = row
        for step in path.split("/"):
            if not isinstance(value, dict):
                value = None
                break
            value = {_unqualified(k): v for k, v in value.items()}.get(step)
    if value is None or value in ([], {}):
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(cell({"v": item}, "v") for item in value)
    if isinstance(value, dict):
        return "{...}"
    text = str(value)
    return (
        text.split(":", 1)[1] if ":" in text and text.split(":", 1)[0].startswith("ietf-") else text
    )


def render(view: View, document: Any) -> list[str]:
    """The table of a view's rows (a line saying so when there are none)."""
    rows = [
        [cell(row, column.path) for column in view.columns] for row in rows_of(document, view.rows)
    ]
    if not rows:
        return ["(none)"]
    return grid([column.title for column in view.columns], rows, indent="")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Any table in the same style."""
    return grid(header, rows, indent="") if rows else ["(none)"]
