"""What the pages show, shaped from RFC 7951 data (pure functions)."""

from __future__ import annotations

from decimal import Decimal

from controller.console.pages.decisions import decision_rows, decision_view
from controller.console.pages.overview import alarms, senders
from controller.console.pages.sessions import record_view, timeline
from controller.console.pages.tables import (
    age_text,
    arrange,
    cell,
    cell_id,
    cst_table,
    live_cells,
    nst_table,
)

SM = "ietf-cats-service-metrics"


def _cst(*entries: dict[str, object]) -> dict[str, object]:
    return {f"{SM}:computing-service-table": {"entry": list(entries)}}


def test_ages_read_at_a_glance() -> None:
    assert [age_text(ms) for ms in (400, 9_940, 45_000, 600_000, 9_000_000)] == [
        "0.4 s",
        "9.9 s",
        "45 s",
        "10 min",
        "2 h",
    ]


def test_a_time_is_shown_as_its_utc_time_of_day_and_kept_whole() -> None:
    shown = cell("2026-12-02T04:29:12.5+01:00")
    assert shown.text == "03:29:12Z"
    assert shown.full == "2026-12-02T04:29:12.5+01:00"
    assert cell("ietf-cats-types:healthy").text == "healthy"
    assert cell(None).text == "-"
    assert cell(0).text == "0"


def test_cst_marks_stale_estimated_and_flagged_entries() -> None:
    table = cst_table(
        _cst(
            {"cs-id": "A", "csci-id": "1", "gas": 5, "aged-out": True, "age": "2500"},
            {
                "cs-id": "A",
                "csci-id": "2",
                "gas": 7,
                "confidence": "ietf-cats-types:estimated",
                "observed": {"flag": ["ietf-cats-service-metrics:computing-time-implausible"]},
            },
        )
    )
    first, second = table.rows
    assert first.marks == ("stale",)
    assert first.cells["age"].age_ms == 2500
    assert first.cells["computing-time"].text == "-"  # absent, never 0
    assert second.marks == ("estimated", "computing-time-implausible")
    assert second.cells["marks"].text == "estimated, computing-time-implausible"


def test_nst_marks_stale_paths() -> None:
    document = {
        f"{SM}:network-service-table": {
            "entry": [{"ingress": "i", "egress": "e", "network-delay": "6.0", "stale": True}]
        }
    }
    assert nst_table(document).rows[0].marks == ("stale",)


def test_sorting_is_numeric_and_puts_absent_values_last() -> None:
    table = cst_table(
        _cst(
            {"cs-id": "A", "csci-id": "1", "gas": 100},
            {"cs-id": "A", "csci-id": "2", "gas": 9},
            {"cs-id": "A", "csci-id": "3"},
        )
    )
    up = arrange(table, "gas")
    down = arrange(table, "gas", descending=True)
    assert [r.key for r in up.rows] == ["A/2", "A/1", "A/3"]
    assert [r.key for r in down.rows] == ["A/1", "A/2", "A/3"]
    assert arrange(table, "no-such-column").sort == ""


def test_filters_keep_rows_with_every_word_and_the_mark() -> None:
    table = cst_table(
        _cst(
            {"cs-id": "ARS", "csci-id": "1.1.1.1:1", "site": "SS2", "aged-out": True},
            {"cs-id": "ARS", "csci-id": "2.2.2.2:2", "site": "SS3"},
            {"cs-id": "VRS", "csci-id": "3.3.3.3:3", "site": "SS3"},
        )
    )
    assert [r.key for r in arrange(table, query="ars ss3").rows] == ["ARS/2.2.2.2:2"]
    assert [r.key for r in arrange(table, marked="stale").rows] == ["ARS/1.1.1.1:1"]
    assert arrange(table, query="ars").total == 3


def test_live_cells_are_named_as_the_page_names_them() -> None:
    table = cst_table(_cst({"cs-id": "A B", "csci-id": "1", "gas": 3, "age": "100"}))
    texts, ages = live_cells(table)
    assert texts[cell_id("cst", "A B/1", "gas")] == "3"
    assert "cst|A_B/1|gas" in texts  # no space in an id
    assert ages == {"cst|A_B/1|age": 100}


DECISION = {
    f"{SM}:decision": [
        {
            "id": "42",
            "time": "2026-12-02T03:00:00+00:00",
            "trigger": "request",
            "request": {"cs-id": "ARS", "ingress": "10.0.0.1"},
            "result": "selected",
            "fallback-level": "none",
            "csci-id": "sci-3",
            "decided-by": "score",
            "candidate": [
                {
                    "csci-id": "sci-1",
                    "computing-time": "5.2",
                    "network-delay": "8.0",
                    "total-service-time": "13.2",
                    "score": "13.2",
                    "rank": 2,
                },
                {"csci-id": "sci-9", "price": 30, "reason": "ietf-cats-types:price-above-maximum"},
                {
                    "csci-id": "sci-3",
                    "computing-time": "6.1",
                    "network-delay": "6.0",
                    "total-service-time": "12.1",
                    "score": "12.1",
                    "rank": 1,
                },
            ],
        }
    ]
}


def test_a_decision_lists_the_ranked_first_then_the_excluded_with_their_reason() -> None:
    view = decision_view(DECISION)
    assert view is not None
    assert [c.csci_id for c in view.candidates] == ["sci-3", "sci-1", "sci-9"]
    assert view.candidates[0].outcome == "rank 1, score 12.1"
    assert view.candidates[2].outcome == "excluded: price-above-maximum"
    assert dict(view.summary)["decided by"] == "score"
    chart = str(view.chart)
    assert 'data-candidate="sci-3"' in chart
    assert 'data-part="network" data-value="6"' in chart
    assert chart.index('data-candidate="sci-3"') < chart.index('data-candidate="sci-1"')
    assert decision_view({}) is None


def test_the_decision_list_filters_and_goes_newest_first() -> None:
    records = [
        {"id": str(n), "request": {"cs-id": cs, "ingress": "i"}, "result": "selected"}
        for n, cs in ((1, "A"), (2, "B"), (3, "A"))
    ]
    document = {f"{SM}:selection-decisions": {"decision": records}}
    assert [r["id"] for r in decision_rows(document, {"cs-id": "A"})] == ["3", "1"]
    assert decision_rows(document, {"result": "default-route"}) == []


def test_alarms_name_stale_entries_and_fallback_decisions() -> None:
    decisions = {
        f"{SM}:selection-decisions": {
            "decision": [
                {
                    "id": "5",
                    "request": {"cs-id": "A", "ingress": "i"},
                    "result": "egress-only",
                    "fallback-level": "network-only",
                },
                {"id": "6", "request": {"cs-id": "A", "ingress": "i"}, "fallback-level": "none"},
            ]
        }
    }
    table = alarms(_cst({"cs-id": "A", "csci-id": "1", "aged-out": True}), {}, decisions)
    kinds = [(r.cells["kind"].text, r.cells["what"].text) for r in table.rows]
    assert kinds == [("stale", "CST A 1"), ("fallback", "decision 5 A at i")]


def test_senders_count_every_refusal() -> None:
    document = {
        f"{SM}:report-senders": {
            "sender": [
                {
                    "source": "csma-1",
                    "counters": {
                        "reports-accepted": "10",
                        "refused-sequence": "2",
                        "refused-clock-skew": "1",
                        "rate-limited-dropped": "4",
                    },
                }
            ]
        }
    }
    assert senders(document).rows[0].cells["refusals"].text == "7"


RECORD = {
    "record-id": "r3",
    "created-at": "2026-12-02T03:00:01Z",
    "step-id": 30,
    "decision-point": "ietf-cats-agent-selection:dp-step-boundary",
    "trigger": "ietf-cats-agent-selection:t1-step-boundary",
    "outcome": "ietf-cats-agent-selection:keep",
    "selected": "C",
    "candidate": [{"csci-id": "B", "valuation": {"transfer-time": "3000", "state-cost": "3000"}}],
    "exclusion": [{"csci-id": "D", "reason": "ietf-cats-agent-selection:region", "detail": "x"}],
    "stability": {"applied": True, "gain-covers-cost": False},
    "fallback-rung": "ietf-cats-agent-selection:none",
}


def test_an_agent_record_shows_valuation_stability_and_exclusions() -> None:
    view = record_view(RECORD)
    facts = dict(view.facts)
    assert view.heading == "dp-step-boundary (t1-step-boundary), turn - step 30"
    assert facts["stability rules"] == "applied yes, gain-covers-cost no"
    assert facts["fallback rung"] == "none"
    assert view.valuations[0][1]["transfer-time"] == "3000"
    assert view.exclusions == (("D", "region; detail x"),)


def test_the_timeline_orders_decisions_commitments_and_handoffs() -> None:
    session = {
        "decision-record": [RECORD],
        "commitment": [
            {
                "commitment-id": "c1",
                "csci-id": "C",
                "created-at": "2026-12-02T03:00:00Z",
                "steps": {"first": 1},
                "state": "active",
            }
        ],
        "handoff": [
            {
                "handoff-id": "h1",
                "source": "C",
                "target": "B",
                "transition": [
                    {"state": "ietf-cats-agent-selection:committed", "at": "2026-12-02T03:00:02Z"}
                ],
            }
        ],
        "accounting": {  # per turn, then per step, as the C-PS's sessions/session holds it
            "turn": [
                {
                    "turn-id": 1,
                    "step": [
                        {
                            "step-id": 30,
                            "budget": [
                                {
                                    "dimension": "ietf-cats-agent-selection:tokens",
                                    "consumed": "2400",
                                }
                            ],
                        }
                    ],
                }
            ]
        },
    }
    kinds = [item.kind for item in timeline(session)]
    assert kinds == ["commitment", "decision", "handoff", "accounting"]
    assert timeline(session)[-1].what == "turn 1 step 30: tokens 2400"


def test_decimal_values_stay_exact() -> None:
    view = decision_view(DECISION)
    assert view is not None
    assert Decimal(view.candidates[0].values["total-service-time"]) == Decimal("12.1")
