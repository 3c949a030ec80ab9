"""Scenarios A-D of draft-zhangb-cats-service-metrics-op-05 section 7, with the draft's numbers."""

from __future__ import annotations

from decimal import Decimal

from controller.selection.joint import (
    DecidedBy,
    ExclusionReason,
    FallbackLevel,
    HardConstraints,
    Objective,
    Requirement,
    ResultKind,
    to_ms,
)
from tests.unit.selection.joint.builders import CF2, CF3, SCI1, SCI3, both, nst, request, section7


def tst_ms(value: int | None) -> Decimal:
    assert value is not None
    return to_ms(value)  # type: ignore[arg-type]


def test_scenario_a_selects_sci3_by_tst_12_vs_13() -> None:
    """7.2: TST 5+8 = 13 ms vs 6+6 = 12 ms; 188.3.67.4:69 wins on the shorter network path."""
    full, fast = both(section7(), request())
    assert full.result is ResultKind.SELECTED
    assert full.fallback_level is FallbackLevel.NONE
    assert full.csci_id == SCI3
    assert full.egress == "188.3.67.4"
    assert tst_ms(full.tst) == 12
    assert tst_ms(full.candidate(SCI1).tst) == 13
    assert tst_ms(full.candidate(SCI3).tst) == 12
    assert [c.csci_id for c in full.candidates] == [SCI3, SCI1]
    assert full.candidate(SCI3).rank == 1
    assert full.candidate(SCI1).rank == 2
    assert full.decided_by is DecidedBy.SCORE
    assert full.complete
    assert not fast.complete
    assert fast.csci_id == SCI3


def test_scenario_b_congestion_reselects_sci1_13_vs_26() -> None:
    """7.3: the delay to CF-3 rises to 20 ms; TST 13 vs 6+20 = 26 ms."""
    full, _ = both(section7(cf3_delay=20), request())
    assert full.csci_id == SCI1
    assert tst_ms(full.tst) == 13
    assert tst_ms(full.candidate(SCI3).tst) == 26


def test_scenario_b_as_an_nst_update_of_the_index() -> None:
    """7.3 as a C-NMA update applied to the maintained index."""
    index = section7()
    assert both(index, request())[1].csci_id == SCI3
    index.put_nst(nst(CF3, 20))
    full, fast = both(index, request())
    assert fast.csci_id == SCI1
    assert tst_ms(fast.tst) == 13
    assert tst_ms(full.candidate(SCI3).tst) == 26


def test_scenario_c_degraded_sci3_loses_13_vs_31() -> None:
    """7.4: SCI-3 degraded, GAS 50, CT 25 ms: TST 25+6 = 31 ms vs 13 ms."""
    full, _ = both(section7(sci3=(50, 25)), request())
    assert full.csci_id == SCI1
    assert tst_ms(full.tst) == 13
    assert tst_ms(full.candidate(SCI3).tst) == 31
    assert full.candidate(SCI3).feasible
    assert full.candidate(SCI3).entry.gas == 50


def test_scenario_c_gas_zero_excludes_sci3_at_step_1() -> None:
    """7.4: GAS drops to 0; 188.3.67.4:69 is filtered out at Step 1, only SCI-1 remains."""
    full, _ = both(section7(sci3=(0, 25)), request())
    assert full.csci_id == SCI1
    assert full.decided_by is DecidedBy.ONLY_CANDIDATE
    excluded = full.candidate(SCI3)
    assert excluded.reason is ExclusionReason.GAS_EXHAUSTED
    assert excluded.tst is None
    assert excluded.score is None


def test_scenario_d_price_budget_8_excludes_sci1() -> None:
    """7.5: Price <= 8 excludes 188.3.67.3:67 (Price 10); 188.3.67.4:69 with TST 12 ms."""
    requirement = Requirement(
        HardConstraints(max_price=8),
        objectives=(Objective.MINIMIZE_LATENCY, Objective.MAXIMIZE_GAS),
    )
    full, _ = both(section7(), request(requirement))
    assert full.csci_id == SCI3
    assert tst_ms(full.tst) == 12
    assert full.decided_by is DecidedBy.ONLY_CANDIDATE
    excluded = full.candidate(SCI1)
    assert excluded.reason is ExclusionReason.PRICE_ABOVE_MAXIMUM
    assert excluded.detail == "Price 10 > 8"


def test_scenario_d_price_budget_12_tst_primary() -> None:
    """7.5: Price <= 12 keeps both; the primary objective (TST 12 vs 13) decides."""
    requirement = Requirement(
        HardConstraints(max_price=12),
        objectives=(Objective.MINIMIZE_LATENCY, Objective.MAXIMIZE_GAS),
    )
    full, _ = both(section7(), request(requirement))
    assert full.csci_id == SCI3
    assert full.decided_by is DecidedBy.OBJECTIVE
    assert full.deciding_objective is Objective.MINIMIZE_LATENCY
    assert tst_ms(full.candidate(SCI1).tst) == 13


def test_scenario_d_equal_tst_gas_secondary() -> None:
    """7.5: with both paths equal (TST 12 each via CF-2 at 7 ms), GAS 600 beats GAS 400."""
    index = section7()
    index.put_nst(nst(CF2, 7))
    requirement = Requirement(
        HardConstraints(max_price=12),
        objectives=(Objective.MINIMIZE_LATENCY, Objective.MAXIMIZE_GAS),
    )
    full, _ = both(index, request(requirement))
    assert tst_ms(full.candidate(SCI1).tst) == tst_ms(full.candidate(SCI3).tst) == 12
    assert full.csci_id == SCI3
    assert full.decided_by is DecidedBy.OBJECTIVE
    assert full.deciding_objective is Objective.MAXIMIZE_GAS
