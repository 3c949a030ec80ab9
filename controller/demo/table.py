"""Plain-text tables of the demo: decisions with their reasons, the legend, step verdicts.

A decision prints as its outcome line (result, fallback level of service-metrics-op 6.2.5,
decided-by of step 6) and one row per candidate: egress, GAS, Computing Time, Network Delay,
TST (step 4), price, health, and rank and score or the exclusion reason code (steps 1-2, 5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from controller.demo.expect import Candidate, Decision

HEADER = ["candidate", "egress", "GAS", "CT ms", "delay ms", "TST ms", "price", "health", "outcome"]


def grid(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "    ") -> list[str]:
    """Left-aligned columns separated by `` | ``, under a rule."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = (cell.ljust(width) for cell, width in zip(cells, widths, strict=True))
        return (indent + " | ".join(padded)).rstrip()

    return [line(header), indent + "-+-".join("-" * width for width in widths)] + [
        line(row) for row in rows
    ]


def number(value: Decimal | int | None) -> str:
    """A value as printed; ``-`` when unknown (never 0)."""
    if value is None:
        return "-"
    if isinstance(value, Decimal):
        return f"{value.normalize():f}" if value == value.to_integral() else f"{value:.3f}"
    return str(value)


def outcome(candidate: Candidate) -> str:
    """``rank 1 (score 0.12)`` or ``excluded: reason (detail)``."""
    if candidate.reason is not None:
        detail = f" ({candidate.detail})" if candidate.detail else ""
        return f"excluded: {candidate.reason}{detail}"
    score = "" if candidate.score is None else f" (score {number(candidate.score)})"
    return f"rank {number(candidate.rank)}{score}"


def candidate_row(candidate: Candidate, labels: Mapping[str, str]) -> list[str]:
    """One row of the candidate table; ``labels`` name CSCI-IDs as the draft does."""
    return [
        labels.get(candidate.csci_id, candidate.csci_id),
        candidate.egress or "-",
        number(candidate.gas),
        number(candidate.computing_time),
        number(candidate.network_delay),
        number(candidate.tst),
        number(candidate.price),
        candidate.health or "-",
        outcome(candidate),
    ]


def summary(decision: Decision, labels: Mapping[str, str]) -> str:
    """The outcome in one line."""
    if decision.result == "selected" and decision.csci_id is not None:
        chosen = f"{labels.get(decision.csci_id, decision.csci_id)} via {decision.egress}"
        how = decision.decided_by or "-"
        if decision.deciding:
            how += f" ({decision.deciding})"
        return (
            f"selected {chosen}, TST {number(decision.tst)} ms; fallback level "
            f"{decision.fallback_level}; decided by {how}"
        )
    where = f" towards egress {decision.egress}" if decision.egress else ""
    return f"{decision.result}{where}; fallback level {decision.fallback_level}"


def decision_lines(decision: Decision, labels: Mapping[str, str]) -> list[str]:
    """The outcome line and the candidate table."""
    rows = [candidate_row(c, labels) for c in decision.candidates]
    return [f"    -> {summary(decision, labels)}", *grid(HEADER, rows)]


def verdict(step_id: str, title: str, problems: Sequence[str]) -> list[str]:
    """``PASS B1: title`` or ``FAIL B1: title`` and one line per problem."""
    word = "FAIL" if problems else "PASS"
    return [f"  {word} {step_id}: {title}", *(f"       - {p}" for p in problems)]
