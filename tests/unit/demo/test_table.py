"""The demo's tables: decisions with their reasons, verdicts and the summary."""

from __future__ import annotations

from decimal import Decimal

from controller.demo.expect import Candidate, Decision
from controller.demo.run import summary
from controller.demo.steps import Step
from controller.demo.table import grid, number, outcome, verdict

LABELS = {"127.3.67.4:20069": "SCI-3 188.3.67.4:69"}


def excluded() -> Candidate:
    return Candidate(
        "127.3.67.3:20067",
        "188.3.67.3",
        400,
        Decimal("6.749"),
        None,
        None,
        10,
        "healthy",
        None,
        None,
        "price-above-maximum",
        "Price 10 > 8",
    )


def winner() -> Candidate:
    return Candidate(
        "127.3.67.4:20069",
        "188.3.67.4",
        600,
        Decimal("7.426"),
        Decimal(6),
        Decimal("13.426"),
        5,
        "healthy",
        Decimal("0.5"),
        1,
        None,
        None,
    )


def test_numbers_print_unknown_as_a_dash_never_zero() -> None:
    assert [number(None), number(8), number(Decimal("6.0")), number(Decimal("6.6774"))] == [
        "-",
        "8",
        "6",
        "6.677",
    ]


def test_outcomes_give_the_rank_and_score_or_the_reason() -> None:
    assert outcome(winner()) == "rank 1 (score 0.500)"
    assert outcome(excluded()) == "excluded: price-above-maximum (Price 10 > 8)"


def test_a_decision_table_names_candidates_as_the_draft_does() -> None:
    from controller.demo.table import decision_lines  # noqa: PLC0415

    decision = Decision(
        "d",
        "selected",
        "none",
        "127.3.67.4:20069",
        "188.3.67.4",
        Decimal("13.426"),
        "only-candidate",
        None,
        (winner(), excluded()),
    )
    lines = decision_lines(decision, LABELS)
    assert lines[0] == (
        "    -> selected SCI-3 188.3.67.4:69 via 188.3.67.4, TST 13.426 ms; "
        "fallback level none; decided by only-candidate"
    )
    assert lines[1].split(" | ")[0].strip() == "candidate"
    assert lines[3].startswith("    SCI-3 188.3.67.4:69 | 188.3.67.4 | 600 | 7.426 | 6 ")
    assert lines[4].startswith("    127.3.67.3:20067    | 188.3.67.3 | 400 | 6.749 | - ")
    assert lines[4].endswith("excluded: price-above-maximum (Price 10 > 8)")


def test_a_network_only_decision_names_its_egress() -> None:
    from controller.demo.table import summary as line  # noqa: PLC0415

    decision = Decision(
        None, "egress-only", "network-only", None, "188.3.67.4", None, None, None, ()
    )
    assert (
        line(decision, {}) == "egress-only towards egress 188.3.67.4; fallback level network-only"
    )


def test_grid_aligns_columns() -> None:
    assert grid(["a", "bb"], [["ccc", "d"]], indent="") == ["a   | bb", "----+---", "ccc | d"]


def test_verdicts_and_summary_count_failures() -> None:
    assert verdict("B1", "congestion", []) == ["  PASS B1: congestion"]
    assert verdict("B1", "congestion", ["winner"]) == ["  FAIL B1: congestion", "       - winner"]
    steps = [Step("A", "initial"), Step("B1", "congestion", problems=("winner",))]
    assert summary(steps, 12.34)[-3:] == [
        "  PASS A: initial",
        "  FAIL B1: congestion",
        "1/2 steps passed (1 FAILED) in 12.3 s",
    ]
