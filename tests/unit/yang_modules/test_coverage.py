"""docs/coverage.md maps every draft element the data model must carry to a schema node that
exists: every element of agent draft Section 7, every CST/NST field of service-metrics-op
6.2.1-6.2.2, and every field of sci-implementation Table 1."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from controller.model import Schema
from controller.types import SchemaPath
from tests.conftest import DOCS_DIR

COVERAGE = DOCS_DIR / "coverage.md"

# Heading fragment of the coverage section -> the elements the draft names there.
REQUIRED: dict[str, tuple[str, ...]] = {
    "6.2.1 Computing Service Table": (
        "CS-ID",
        "CSCI-ID",
        "GAS",
        "Computing Time",
        "Price",
        "Reputation",
        "Security Level",
        "Last Updated",
        "Expiry Time",
    ),
    "6.2.2 Network Service Table": (
        "Ingress CF",
        "Egress CF",
        "Network Delay",
        "Jitter",
        "Bandwidth",
        "Loss Rate",
        "Path Attributes",
        "Last Updated",
    ),
    "Table 1 report message": (
        "CSCI-ID",
        "CS-ID",
        "Timestamp",
        "Sequence Number",
        "GAS",
        "Computing Time",
        "Health Summary",
        "Optional Metrics",
        "Instance Details",
    ),
    "7.1 Descriptor elements": (
        "service-id",
        "session-id",
        "turn-id",
        "step-id",
        "capability-tier",
        "required-precision",
        "context-length",
        "working-set",
        "element-class",
        "locality",
        "tenant",
        "budget",
        "objective",
        "tail-tolerance",
        "degradation",
        "freshness-need",
        "horizon",
        "mode",
    ),
    "7.2 Resource view elements": (
        "path-set",
        "endpoint-cost",
        "determinism",
        "transfer-window",
        "tier-offered",
        "queue-delay",
        "memory-headroom",
        "step-latency",
        "presence",
        "residency",
        "element-size",
        "retrieval-cost",
        "recompute-cost",
        "state-age",
        "retention",
        "governance",
    ),
    "7.3 Accounting elements": ("consumed", "remaining", "reserve", "attribution"),
    "7.4 Exchange metadata elements": ("collected-at", "freshness-bound", "source", "confidence"),
    "Table 4 resources": (
        "Path egress capacity",
        "Path delay and jitter",
        "Endpoint cost",
        "Transfer window",
        "Accelerator memory free",
        "Host memory free",
        "Local persistent store",
        "Remote state store",
        "State residency",
        "State retention",
        "Accelerator capability",
        "Waiting work",
        "Prefill and decode rate",
        "Context window",
        "Artifact locality",
    ),
}


@dataclass(frozen=True)
class Row:
    heading: str
    element: str
    path: str


def _cells(line: str) -> list[str]:
    return [cell.strip().strip("`").strip() for cell in line.strip().strip("|").split("|")]


def parse_coverage(text: str) -> list[Row]:
    """Rows of every ``| Element | Section | YANG path |`` table, with their heading."""
    rows: list[Row] = []
    heading = ""
    in_table = False
    for line in text.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            in_table = False
        elif line.startswith("|"):
            cells = _cells(line)
            if cells[0].lower() == "element":
                in_table = True
            elif in_table and not set(cells[0]) <= set("-: "):
                rows.append(Row(heading, cells[0], cells[-1]))
        else:
            in_table = False
    return rows


ROWS = parse_coverage(COVERAGE.read_text(encoding="utf-8"))


def test_coverage_has_rows() -> None:
    assert len(ROWS) > 100


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.element}->{row.path}")
def test_every_path_resolves_in_the_compiled_schema(schema: Schema, row: Row) -> None:
    for path in re.split(r"\s*(?:<br>|,)\s*", row.path):
        assert path.startswith("/ietf-cats-"), path
        assert schema.has_schema_path(SchemaPath(path)), path


@pytest.mark.parametrize("section", sorted(REQUIRED))
def test_every_draft_element_is_mapped(section: str) -> None:
    mapped = {row.element.lower() for row in ROWS if section in row.heading}
    missing = [name for name in REQUIRED[section] if name.lower() not in mapped]
    assert not missing, f"{section}: not in docs/coverage.md: {missing}"


def test_parser_reads_headings_and_skips_separators() -> None:
    text = (
        "## 6.2.1 CST\n\n| Element | Section | YANG path |\n|---|---|---|\n"
        "| GAS | 6.2.1 | `/a:b` |\n"
    )
    assert parse_coverage(text) == [Row("6.2.1 CST", "GAS", "/a:b")]
