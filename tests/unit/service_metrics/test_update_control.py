"""Update control of the C-PS ingest (service-metrics-op 8, 9) on a real ServiceMetrics with
an injected clock: rate limiting, price dampening, GAS capping, significant changes."""

from __future__ import annotations

import pytest

from controller.datastore.api import Principal
from controller.errors import CatsError
from controller.types import Json
from tests.unit.service_metrics.reporting import SCI3, SCI4, SM, Built, entry, error_of, path

# ---------------------------------------------------------------- rate limit (8)


def test_rate_limit_drop_refuses_and_changes_nothing() -> None:
    built = Built({"rate-limit": {"max-reports": 2, "interval": 10}})
    built.report(entry(SCI3, gas=1))
    built.report(entry(SCI3, gas=2))
    built.published.clear()
    with pytest.raises(CatsError) as caught:
        built.report(entry(SCI3, gas=300))
    assert error_of(caught) == ("resource-denied", "rate-limited", f"/{SM}:report-service-metrics")
    assert "retry after 2026-11-30T10:00:10.000000Z" in str(caught.value)
    assert built.cst()[SCI3]["gas"] == 2
    counters = built.counters()
    assert (counters["rate-limited-dropped"], counters["reports-accepted"]) == ("1", "2")
    senders = built.service.senders_state()[f"{SM}:report-senders"]["sender"]
    assert senders[0]["last-sequence"] == "2"
    (refused,) = built.events("report-refused")
    assert (refused["reason"], refused["sequence-number"]) == (f"{SM}:rate-limited", "3")
    built.at(10)
    built.report(entry(SCI3, gas=3), sequence=3)  # the dropped sequence number is still free
    assert built.cst()[SCI3]["gas"] == 3


def test_rate_limit_throttle_holds_newest_values_until_the_interval_ends() -> None:
    built = Built({"rate-limit": {"max-reports": 1, "interval": 10, "action": "throttle"}})
    built.report(entry(SCI3, gas=100))
    built.at(2)
    first = built.report(entry(SCI3, gas=300), entry(SCI4, gas=7))
    assert first == {"accepted-entries": 2, "deferred-until": "2026-11-30T10:00:10.000000Z"}
    built.at(3)
    built.report(entry(SCI3, gas=400))
    assert built.cst()[SCI3]["gas"] == 100
    assert SCI4 not in built.cst()
    assert built.counters()["rate-limited-throttled"] == "2"
    built.published.clear()
    built.at(10)
    built.service.sweep()
    rows = built.cst()
    assert (rows[SCI3]["gas"], rows[SCI4]["gas"], rows[SCI3]["sequence"]) == (400, 7, "3")
    assert rows[SCI3]["last-updated"] == "2026-11-30T10:00:10.000000Z"
    changes = {e["csci-id"]: (e["change"], e["gas"]) for e in built.events("cst-entry-changed")}
    assert changes == {SCI3: ("updated", 400), SCI4: ("added", 7)}
    assert built.counters()["entries-accepted"] == "3"


def test_throttled_values_apply_before_the_next_report() -> None:
    built = Built({"rate-limit": {"max-reports": 1, "interval": 10, "action": "throttle"}})
    built.report(entry(SCI3, gas=100))
    built.report(entry(SCI3, gas=300), entry(SCI4, gas=7), kind="full")
    built.at(11)
    built.report(entry(SCI4, gas=8))  # no sweep ran: the held values go first
    rows = built.cst()
    assert (rows[SCI3]["gas"], rows[SCI4]["gas"]) == (300, 8)


def test_throttled_full_report_removes_at_the_end_of_the_interval() -> None:
    built = Built({"rate-limit": {"max-reports": 1, "interval": 10, "action": "throttle"}})
    built.report(entry(SCI3), entry(SCI4))
    built.report(entry(SCI4, gas=5), kind="full")
    assert set(built.cst()) == {SCI3, SCI4}
    built.at(10)
    built.service.sweep()
    assert set(built.cst()) == {SCI4}


# ---------------------------------------------------------------- price dampening (9)

DAMPENING: Json = {"price-dampening": {"enabled": True, "increase-threshold": "20", "window": 60}}


def test_price_increase_within_the_window_is_held_back() -> None:
    built = Built(DAMPENING)
    built.report(entry(SCI3, price=10))
    built.at(30)
    reply = built.report(entry(SCI3, price=13))
    assert reply == {"accepted-entries": 1, "dampened-entries": 1}
    row = built.cst()[SCI3]
    assert row["price"] == 10
    assert row["pending-price-increase"] == {
        "price": 13,
        "effective-at": "2026-11-30T10:01:00.000000Z",
    }
    built.at(40)
    assert built.report(entry(SCI3, price=13))["dampened-entries"] == 1
    assert built.counters()["price-increases-dampened"] == "1"
    built.published.clear()
    built.at(60)
    built.service.sweep()
    row = built.cst()[SCI3]
    assert (row["price"], "pending-price-increase" in row) == (13, False)
    (raised,) = built.events("cst-entry-changed")
    assert (raised["change"], raised["changed-metric"]) == ("updated", [f"{SM}:price"])


def test_small_increase_and_decrease_take_effect_at_once() -> None:
    built = Built(DAMPENING)
    built.report(entry(SCI3, price=10))
    assert built.report(entry(SCI3, price=12)) == {"accepted-entries": 1}
    assert built.report(entry(SCI3, price=5)) == {"accepted-entries": 1}
    assert built.cst()[SCI3]["price"] == 5


def test_increase_after_the_window_takes_effect_and_a_report_supersedes_a_pending_one() -> None:
    built = Built(DAMPENING)
    built.report(entry(SCI3, price=10))
    built.at(10)
    built.report(entry(SCI3, price=50))
    built.at(20)
    built.report(entry(SCI3, price=11))  # within the threshold: in force, pending dropped
    row = built.cst()[SCI3]
    assert (row["price"], "pending-price-increase" in row) == (11, False)
    built.at(90)
    built.report(entry(SCI3, price=50))  # the window after the change at 20 s has passed
    assert built.cst()[SCI3]["price"] == 50


def test_dampening_disabled_by_default() -> None:
    built = Built()
    built.report(entry(SCI3, price=10))
    assert built.report(entry(SCI3, price=100)) == {"accepted-entries": 1}
    assert built.cst()[SCI3]["price"] == 100


# ---------------------------------------------------------------- GAS capping (9)


def test_gas_above_capacity_is_capped_counted_and_flagged() -> None:
    built = Built(attachments={"attachment": [{"csci-id": SCI3, "gas-capacity": 500}]})
    built.report(entry(SCI3, gas=900))
    row = built.cst()[SCI3]
    assert (row["gas"], row["reported-gas"]) == (500, 500)
    assert row["observed"] == {"flag": [f"{SM}:gas-above-capacity"]}
    (added,) = built.events("cst-entry-changed")
    assert (added["change"], added["gas"], added["flag"]) == (
        "added",
        500,
        [f"{SM}:gas-above-capacity"],
    )
    built.report(entry(SCI3, gas=800))
    assert built.events("cst-entry-changed") == []  # still capped to 500: nothing new
    assert built.counters()["gas-capped"] == "2"
    built.report(entry(SCI3, gas=490))
    assert "observed" not in built.cst()[SCI3]


def test_a_newly_capped_entry_is_announced_flagged() -> None:
    built = Built(attachments={"attachment": [{"csci-id": SCI3, "gas-capacity": 500}]})
    built.report(entry(SCI3, gas=480))
    built.published.clear()
    built.report(entry(SCI3, gas=520))
    (flagged,) = built.events("cst-entry-changed")
    assert (flagged["change"], flagged["flag"]) == ("flagged", [f"{SM}:gas-above-capacity"])


# ---------------------------------------------------------------- significance (8)


def test_only_significant_changes_are_announced() -> None:
    built = Built()
    built.report(entry(SCI3, gas=1000, ct="10"))
    assert [e["change"] for e in built.events("cst-entry-changed")] == ["added"]
    built.report(entry(SCI3, gas=1040, ct="11"))  # 40 slots, 4 %, 10 %: below every threshold
    built.report(entry(SCI3, gas=1040, ct="11"))
    assert built.events("cst-entry-changed") == []
    built.report(entry(SCI3, gas=1060, ct="11"))  # 60 slots since the last announcement
    (updated,) = built.events("cst-entry-changed")
    assert (updated["change"], updated["gas"], updated["computing-time"]) == (
        "updated",
        1060,
        "11.000",
    )
    assert updated["changed-metric"] == [f"{SM}:gas", f"{SM}:computing-time"]
    built.report(entry(SCI3, gas=1060, ct="11", health="degraded"))
    assert [e["health"] for e in built.events("cst-entry-changed")] == ["degraded"]


def test_small_changes_are_applied_but_not_announced() -> None:
    built = Built()
    built.report(entry(SCI3, gas=1000, ct="10"))
    built.events("cst-entry-changed")
    built.at(5)
    built.report(entry(SCI3, gas=1030, ct="10.3"))  # the steady state of section 8
    row = built.cst()[SCI3]
    assert (row["gas"], row["computing-time"], row["sequence"]) == (1030, "10.300", "2")
    assert row["last-changed"] == row["last-updated"] == "2026-11-30T10:00:05.000000Z"
    built.at(7)
    built.report(entry(SCI3, gas=1030, ct="10.300"))  # the same values: refreshed only
    row = built.cst()[SCI3]
    assert (row["last-changed"], row["last-updated"]) == (
        "2026-11-30T10:00:05.000000Z",
        "2026-11-30T10:00:07.000000Z",
    )
    assert built.events("cst-entry-changed") == []


def test_withdrawal_and_unhealthy_are_announced() -> None:
    built = Built()
    built.report(entry(SCI3), entry(SCI4))
    built.published.clear()
    built.report(entry(SCI3, gas=0), entry(SCI4, health="unhealthy"))
    changes = {e["csci-id"]: e["change"] for e in built.events("cst-entry-changed")}
    assert changes == {SCI3: "withdrawn", SCI4: "updated"}


def test_health_change_off_still_announces_becoming_unusable() -> None:
    built = Built({"delta-threshold": {"health-change": False}})
    built.report(entry(SCI3))
    built.published.clear()
    built.report(entry(SCI3, health="degraded"))
    assert built.events("cst-entry-changed") == []
    built.report(entry(SCI3, health="unhealthy"))
    assert [e["change"] for e in built.events("cst-entry-changed")] == ["updated"]


# ---------------------------------------------------------------- dispatch accounting (8)


CLIENT = Principal("operator")


def _select(built: Built) -> str:
    reply = built.service.select_service(CLIENT, {"cs-id": "ARS", "ingress": "10.0.0.1"})
    chosen: str = reply["csci-id"]
    return chosen


def _two_scis(update: Json) -> Built:
    built = Built(update)
    built.paths(path("188.3.67.4", "1"))
    built.report(entry(SCI3, ct="5"), entry(SCI4, ct="6"))
    return built


def test_without_dispatch_accounting_every_selection_until_the_next_report_herds() -> None:
    built = _two_scis({})
    assert [_select(built) for _ in range(4)] == [SCI3] * 4


def test_dispatch_accounting_counts_the_selections_since_the_report() -> None:
    accounting = {"enabled": True, "computing-time-per-selection": "2"}
    built = _two_scis({"dispatch-accounting": accounting})
    # SCI-3 (5 ms) twice: 5 + 2 = 7 > 6; then SCI-4 (6 + 2 = 8 > 7): they alternate.
    assert [_select(built) for _ in range(4)] == [SCI3, SCI4, SCI3, SCI4]
    decision = built.service.decisions_state()[f"{SM}:selection-decisions"]["decision"][-1]
    counted = next(c for c in decision["candidate"] if c["csci-id"] == SCI3)
    assert (counted["gas"], counted["computing-time"]) == (98, "9.000")
    assert f"{SM}:computing-time" in counted["estimated-metric"]
    built.at(1.0)
    built.report(entry(SCI3, ct="5"), entry(SCI4, ct="6"))
    assert _select(built) == SCI3  # a newer report reflects them: the ledger starts over


def test_a_dry_run_is_not_counted() -> None:
    built = _two_scis(
        {"dispatch-accounting": {"enabled": True, "computing-time-per-selection": "2"}}
    )
    for _ in range(3):
        reply = built.service.select_service(
            CLIENT, {"cs-id": "ARS", "ingress": "10.0.0.1", "dry-run": [None]}
        )
        assert reply["csci-id"] == SCI3
