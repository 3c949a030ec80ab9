"""``catsctl show`` tables from RFC 7951 replies (no server)."""

from __future__ import annotations

from controller.operator.tables import VIEWS, cell, render, rows_of


def test_the_cst_prints_aligned_columns_with_units_and_dashes_for_unknowns() -> None:
    reply = {
        "ietf-cats-service-metrics:computing-service-table": {
            "entry": [
                {
                    "cs-id": "ARS",
                    "csci-id": "10.0.0.3:69",
                    "gas": 600,
                    "computing-time": "6.000",
                    "health": "healthy",
                    "egress": "CF-3",
                },
                {"cs-id": "ARS", "csci-id": "10.0.0.2:67", "gas": 400, "health": "degraded"},
            ]
        }
    }
    lines = render(VIEWS["cst"], reply)
    assert lines[0].split(" | ")[:5] == [
        "cs-id",
        "csci-id    ",
        "egress",
        "gas",
        "computing-time ms",
    ]
    assert set(lines[1]) <= {"-", "+"}
    assert "10.0.0.3:69" in lines[2]
    assert "6.000" in lines[2]
    assert lines[3].split(" | ")[4].strip() == "-"  # unknown computing time, never 0


def test_nested_rows_keep_their_parents_leaves() -> None:
    reply = {
        "ietf-cats-agent-selection:sessions": {
            "session": [
                {"session-id": "s1", "commitment": [{"commitment-id": "c1", "state": "active"}]},
                {"session-id": "s2"},
            ]
        }
    }
    rows = list(rows_of(reply, VIEWS["rules"].rows))
    assert rows == [{"session/session-id": "s1", "commitment-id": "c1", "state": "active"}]
    assert "s1" in render(VIEWS["rules"], reply)[2]


def test_identities_lose_their_module_and_empty_tables_say_so() -> None:
    assert cell({"reason": "ietf-cats-types:value-stale"}, "reason") == "value-stale"
    assert cell({"in-sync": True}, "in-sync") == "true"
    assert render(VIEWS["commits"], {"cats-controller-admin:commits": {"kept": 5}}) == ["(none)"]
