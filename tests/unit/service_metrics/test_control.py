"""The pure update-control rules (service-metrics-op 8, 9), the update-control parsing and the
sender ledger encoding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.selection.joint import CstEntry, Health, Metric, from_ms
from controller.service_metrics import control
from controller.service_metrics.control import Held, RateWindow
from controller.service_metrics.ingest import PendingPrice, SenderRecord
from controller.service_metrics.ledger import FILE_NAME, LedgerFile, decode, encode
from controller.service_metrics.policy import (
    DeltaThreshold,
    PriceDampening,
    RateLimit,
    update_control,
)
from controller.types import CsciId, CsId, ForwarderId

T0 = 1_000_000.0


def cst(gas: int = 100, ct: str = "10", **extra: Any) -> CstEntry:
    values: dict[str, Any] = {"egress": ForwarderId("cf"), **extra}
    return CstEntry(CsId("ARS"), CsciId("a:1"), gas, from_ms(ct), T0, T0 + 30, **values)


def test_update_control_parses_every_leaf_with_yang_defaults() -> None:
    parsed = update_control(
        {
            "delta-threshold": {"gas-absolute": 5, "gas-relative": "2.5", "health-change": False},
            "rate-limit": {"max-reports": 3, "interval": 2, "action": "throttle"},
            "price-dampening": {"enabled": True, "increase-threshold": "12.5", "window": 9},
            "network-entry-lifetime": 40,
        }
    )
    assert parsed.delta == DeltaThreshold(5, 2.5, 20.0, health_change=False)
    assert parsed.rate_limit == RateLimit(enabled=True, max_reports=3, interval=2, throttle=True)
    assert parsed.dampening == PriceDampening(enabled=True, increase_threshold=12.5, window=9)
    assert parsed.network_entry_lifetime == 40.0
    defaults = update_control({})
    assert (defaults.rate_limit, defaults.dampening.enabled, defaults.lifetime) == (
        RateLimit(),
        False,
        180.0,
    )


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (cst(150), False),  # 50 slots is not more than 50; 50 % is more than 10 %
        (cst(100, "12"), False),  # 20 % is not more than 20 %
        (cst(100, "12.001"), True),
        (cst(100, health=Health.DEGRADED), True),
        (cst(100, price=3), True),
        (cst(100, egress=ForwarderId("other")), True),
    ],
)
def test_significant_by_the_delta_thresholds(new: CstEntry, expected: bool) -> None:  # noqa: FBT001
    delta = DeltaThreshold(gas_absolute=50, gas_relative=60)
    assert control.significant(cst(100), new, delta) is expected


def test_relative_gas_threshold_and_change_kinds() -> None:
    delta = DeltaThreshold(gas_absolute=1000, gas_relative=10)
    assert control.significant(cst(100), cst(111), delta)
    assert not control.significant(cst(100), cst(110), delta)
    assert control.significant(cst(10), cst(9), delta)  # one slot of GAS 10: it counts
    assert not control.significant(cst(15), cst(14), delta)  # 1.5 slots: two are needed
    assert control.cst_change(None, cst(), delta, newly_flagged=False) == control.ADDED
    assert control.cst_change(cst(5), cst(0), delta, newly_flagged=False) == control.WITHDRAWN
    assert control.cst_change(cst(), cst(101), delta, newly_flagged=True) == control.FLAGGED
    assert control.cst_change(cst(), cst(101), delta, newly_flagged=False) is None
    assert control.changed_metrics(cst(1, "1"), cst(2, "1", price=4)) == (Metric.GAS, Metric.PRICE)


def test_usable_needs_gas_health_and_time() -> None:
    assert control.usable(cst(health=Health.DEGRADED), T0)
    assert not control.usable(cst(0), T0)
    assert not control.usable(cst(health=Health.UNKNOWN), T0)
    assert not control.usable(cst(), T0 + 30)


def test_dampen_holds_large_increases_within_the_window() -> None:
    damp = PriceDampening(enabled=True, increase_threshold=20, window=60)
    assert control.dampen(10, T0, 13, T0 + 59, damp) == PendingPrice(13, T0 + 60)
    assert control.dampen(10, T0, 12, T0 + 1, damp) is None
    assert control.dampen(10, T0, 13, T0 + 60, damp) is None
    assert control.dampen(10, T0, 5, T0 + 1, damp) is None
    assert control.dampen(None, T0, 50, T0 + 1, damp) is None
    assert control.dampen(0, T0, 1, T0 + 1, damp) == PendingPrice(1, T0 + 60)
    assert control.dampen(10, T0, 13, T0 + 1, PriceDampening()) is None


def test_rate_counts_reports_in_fixed_windows() -> None:
    limit = RateLimit(max_reports=2, interval=10)
    window, excess = control.rate(None, T0, limit)
    assert (window, excess) == (RateWindow(T0, 1), False)
    window, excess = control.rate(window, T0 + 1, limit)
    assert (window, excess) == (RateWindow(T0, 2), False)
    window, excess = control.rate(window, T0 + 9.9, limit)
    assert (window, excess, window.end(limit)) == (RateWindow(T0, 2), True, T0 + 10)
    assert control.rate(window, T0 + 10, limit) == (RateWindow(T0 + 10, 1), False)


def test_held_keeps_the_newest_values_and_full_report_removals() -> None:
    held = Held(T0 + 10, 1)
    held.hold(1, control.DELTA, "SS3", [(("A", "a"), {"gas": 1}), (("A", "b"), {"gas": 2})])
    held.hold(2, control.FULL, "SS3", [(("A", "b"), {"gas": 3})])
    held.hold(3, control.DELTA, "SS3", [(("A", "c"), {"gas": 4})])
    held.hold(4, control.HEARTBEAT, None, [])
    assert held.sequence == 4
    assert held.entries == {("A", "b"): ({"gas": 3}, "SS3"), ("A", "c"): ({"gas": 4}, "SS3")}
    assert held.full == {"SS3": {("A", "b"), ("A", "c")}}
    assert held.heartbeats == {None}


def test_ledger_round_trip_and_unreadable_ledger(tmp_path: Path) -> None:
    records = {"s": SenderRecord("s", "c-sma", T0, 7, T0 + 1, 3, 30, 1, 0, 0, 2, 0, 1, 4)}
    assert decode(encode(records)) == records
    ledger = LedgerFile(tmp_path)
    assert ledger.load() == {}
    ledger.save(records)
    assert LedgerFile(tmp_path).load() == records
    (tmp_path / FILE_NAME).write_text("{not json")
    assert LedgerFile(tmp_path).load() == {}
    assert (tmp_path / f"{FILE_NAME}.corrupt").exists()
    assert LedgerFile(None).load() == {}
