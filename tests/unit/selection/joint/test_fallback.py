"""Fallback levels 1-3 (service-metrics-op 6.2.5)."""

from __future__ import annotations

from decimal import Decimal

from controller.selection.joint import (
    FallbackLevel,
    FallbackPolicy,
    HardConstraints,
    Health,
    RelaxationAmount,
    RelaxationStep,
    Requirement,
    ResultKind,
    SelectionIndex,
    SelectionSettings,
    from_ms,
)
from controller.types import ForwarderId
from tests.unit.selection.joint.builders import (
    CF2,
    CF3,
    INGRESS,
    NOW,
    SCI3,
    both,
    cst,
    nst,
    request,
    section7,
)

Step = RelaxationStep


def test_level_1_relaxes_price_by_20_percent_cumulatively_over_rounds() -> None:
    """Price <= 4 excludes both; +20 % gives 4.8 (still below 5), a second round 5.76."""
    req = request(Requirement(HardConstraints(max_price=4)))
    full, _ = both(section7(), req)
    assert full.result is ResultKind.SERVICE_UNAVAILABLE
    assert full.fallback_level is FallbackLevel.RELAX_CONSTRAINTS
    assert [(r.step, r.before, r.after) for r in full.relaxations] == [
        (Step.RELAX_PRICE, 4, Decimal("4.8"))
    ]
    two = SelectionSettings(fallback=FallbackPolicy(max_rounds=2))
    full, _ = both(section7(), req, two)
    assert full.result is ResultKind.SELECTED
    assert full.csci_id == SCI3
    assert full.fallback_level is FallbackLevel.RELAX_CONSTRAINTS
    assert [(r.round, r.after) for r in full.relaxations] == [
        (1, Decimal("4.8")),
        (2, Decimal("5.76")),
    ]


def test_level_1_records_relaxations_in_configured_order() -> None:
    hard = HardConstraints(max_price=4, min_security_level=9, max_latency=from_ms(10))
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, 5, security_level=8))
    settings = SelectionSettings(
        fallback=FallbackPolicy(
            relaxation=(
                RelaxationAmount(Step.RELAX_LATENCY),
                RelaxationAmount(Step.RELAX_SECURITY_LEVEL),
                RelaxationAmount(Step.RELAX_PRICE, Decimal(50)),
            )
        )
    )
    full, _ = both(index, request(Requirement(hard)), settings)
    assert full.csci_id == SCI3
    assert [(r.position, r.step, r.before, r.after) for r in full.relaxations] == [
        (1, Step.RELAX_LATENCY, 10_000, 12_000),
        (2, Step.RELAX_SECURITY_LEVEL, 9, 8),
        (3, Step.RELAX_PRICE, 4, 6),
    ]


def test_level_1_accept_degraded_and_point_steps() -> None:
    """Item 9 re-admits DEGRADED sites; item 4 lowers N_req by one slot per round."""
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, 5, health=Health.DEGRADED))
    index.put_cst(cst("188.3.67.3:67", 400, 5, 10, health=Health.DEGRADED))
    req = Requirement(HardConstraints(accept_degraded=False))
    full, _ = both(index, request(req))
    assert full.csci_id == SCI3
    assert [r.step for r in full.relaxations] == [Step.ACCEPT_DEGRADED]
    gas = Requirement(HardConstraints(required_gas=700))
    full, _ = both(section7(), request(gas))
    assert full.csci_id is None  # one round: 699 slots still exceed GAS 600
    assert [(r.step, r.before, r.after) for r in full.relaxations] == [(Step.RELAX_GAS, 700, 699)]


def test_level_2_network_only_when_no_computing_metrics_are_usable() -> None:
    """7.4: all ARS entries GAS 0 -> the egress with the minimum Network Delay (CF-3, 6 ms)."""
    index = section7(sci3=(0, 25))
    index.put_cst(cst("188.3.67.3:67", 0, 5, 10))
    full, fast = both(index, request())
    assert full.result is ResultKind.EGRESS_ONLY
    assert full.fallback_level is FallbackLevel.NETWORK_ONLY
    assert full.egress == CF3
    assert full.network_delay == from_ms(6)
    assert full.csci_id is None
    assert fast.complete


def test_level_2_uses_service_policy_fallback_egresses() -> None:
    index = SelectionIndex()
    index.put_nst(nst("192.0.2.1", 3))
    req = request(fallback_egresses=(ForwarderId("192.0.2.1"),))
    full, _ = both(index, req)
    assert (full.result, full.egress) == (ResultKind.EGRESS_ONLY, "192.0.2.1")


def test_level_3_default_route_when_no_network_path() -> None:
    index = section7()
    index.remove_nst(INGRESS, CF2)
    index.remove_nst(INGRESS, CF3)
    full, _ = both(index, request())
    assert full.result is ResultKind.DEFAULT_ROUTE
    assert full.fallback_level is FallbackLevel.DEFAULT_ROUTE
    expired = SelectionIndex()
    expired.put_cst(cst(SCI3, 600, 6, 5, expiry=NOW - 1))
    assert both(expired, request())[0].result is ResultKind.DEFAULT_ROUTE


def test_service_unavailable_when_constraints_stand_or_levels_are_disabled() -> None:
    off = SelectionSettings(fallback=FallbackPolicy(relax_constraints=False))
    full, _ = both(section7(), request(Requirement(HardConstraints(max_price=1))), off)
    assert full.result is ResultKind.SERVICE_UNAVAILABLE
    assert full.fallback_level is FallbackLevel.NONE
    index = section7(sci3=(0, 6))
    index.put_cst(cst("188.3.67.3:67", 0, 5, 10))
    none = SelectionSettings(fallback=FallbackPolicy(network_only=False, default_route=False))
    assert both(index, request(), none)[0].result is ResultKind.SERVICE_UNAVAILABLE
    no_l2 = SelectionSettings(fallback=FallbackPolicy(network_only=False))
    assert both(index, request(), no_l2)[0].result is ResultKind.SERVICE_UNAVAILABLE
