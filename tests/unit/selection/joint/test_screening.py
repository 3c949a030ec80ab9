"""Steps 1-5 (service-metrics-op 6.2.3): every constraint, expiry, time-sync and units."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from controller.selection.joint import (
    ExclusionReason,
    FallbackPolicy,
    HardConstraints,
    Health,
    Metric,
    NstEntry,
    Requirement,
    SelectionSettings,
    ValueCondition,
    from_ms,
    from_us,
    to_ms,
)
from tests.unit.selection.joint.builders import (
    CF3,
    EXPIRY,
    INGRESS,
    NOW,
    SCI1,
    SCI3,
    both,
    cst,
    nst,
    request,
    section7,
)

R = ExclusionReason


def test_microseconds_convert_exactly_to_milliseconds() -> None:
    assert to_ms(from_us(1500)) == Decimal("1.500")
    assert to_ms(from_us(1)) == Decimal("0.001")
    assert from_ms("0.001") == from_us(1)
    assert from_ms(6) + from_ms(6) == from_ms(12)
    assert from_ms("0.1") + from_ms("0.2") == from_ms("0.3")
    with pytest.raises(ValueError, match="whole number"):
        from_ms("0.0005")
    with pytest.raises(ValueError, match="uint32"):
        from_us(-1)


def test_nst_delay_reported_in_microseconds_gives_the_same_tst() -> None:
    """6.2.2: a BGP-LS delay of 6000 us is 6 ms on the TST time base (Scenario A)."""
    index = section7()
    index.put_nst(NstEntry(INGRESS, CF3, from_us(6000), NOW))
    full, _ = both(index, request())
    assert full.csci_id == SCI3
    assert to_ms(full.tst) == 12  # type: ignore[arg-type]


COMPUTING = [
    (
        HardConstraints(min_security_level=5),
        {"security_level": 4},
        R.SECURITY_LEVEL_BELOW_MINIMUM,
        "Security Level 4 < 5",
    ),
    (
        HardConstraints(min_security_level=5, require_validated_security_level=True),
        {"security_level": 9},
        R.SECURITY_LEVEL_NOT_VALIDATED,
        "Security Level 9 is self-reported",
    ),
    (
        HardConstraints(min_reputation=7),
        {"reputation": 6},
        R.REPUTATION_BELOW_MINIMUM,
        "Reputation 6 < 7",
    ),
    (HardConstraints(max_price=9), {}, R.PRICE_ABOVE_MAXIMUM, "Price 10 > 9"),
    (HardConstraints(required_gas=401), {}, R.GAS_INSUFFICIENT, "GAS 400 < 401"),
]


@pytest.mark.parametrize(("hard", "extra", "reason", "detail"), COMPUTING)
def test_computing_hard_constraints(
    hard: HardConstraints, extra: dict[str, Any], reason: ExclusionReason, detail: str
) -> None:
    """6.2.3 Step 2 a-d: SCI-1 violates the constraint; at the bound SCI-3 passes."""
    index = section7()
    index.put_cst(cst(SCI1, 400, 5, 10, **extra))
    index.put_cst(
        cst(SCI3, 600, 6, 5, security_level=9, reputation=9, security_level_validated=True)
    )
    full, _ = both(index, request(Requirement(hard)))
    assert full.csci_id == SCI3
    assert full.candidate(SCI1).reason is reason
    assert full.candidate(SCI1).detail == detail
    assert full.candidate(SCI1).tst is None


def test_price_zero_and_security_zero_are_legitimate_values() -> None:
    """6.2.3 Step 6: zero is a value, not 'unspecified'."""
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, 0, security_level=0))
    full, _ = both(index, request(Requirement(HardConstraints(max_price=0))))
    assert full.csci_id == SCI3
    assert full.candidate(SCI1).reason is R.PRICE_ABOVE_MAXIMUM


def test_unknown_value_never_satisfies_a_constraint() -> None:
    """A constraint in force with an absent value excludes with value-unknown."""
    full, _ = both(section7(), request(Requirement(HardConstraints(min_reputation=0))))
    report = full.candidate(SCI1)
    assert report.reason is R.VALUE_UNKNOWN
    assert report.detail == "min-reputation in force, reputation unknown"
    assert [(u.metric, u.condition) for u in report.unusable] == [
        (Metric.REPUTATION, ValueCondition.UNKNOWN)
    ]


NETWORK = [
    (
        HardConstraints(min_bandwidth=100),
        {"bandwidth": 99},
        R.BANDWIDTH_BELOW_MINIMUM,
        "Bandwidth 99 Mbps < 100 Mbps",
    ),
    (
        HardConstraints(max_jitter=from_ms(2)),
        {"jitter": from_ms("2.5")},
        R.JITTER_ABOVE_MAXIMUM,
        "Jitter 2.500 ms > 2.000 ms",
    ),
    (
        HardConstraints(max_loss_rate=100),
        {"loss_rate": 101},
        R.LOSS_RATE_ABOVE_MAXIMUM,
        "Loss Rate 101 ppm > 100 ppm",
    ),
    (
        HardConstraints(min_bandwidth=100),
        {},
        R.VALUE_UNKNOWN,
        "min-bandwidth in force, bandwidth unknown",
    ),
]


@pytest.mark.parametrize(("hard", "path_extra", "reason", "detail"), NETWORK)
def test_network_hard_constraints(
    hard: HardConstraints, path_extra: dict[str, Any], reason: ExclusionReason, detail: str
) -> None:
    """6.2.3 Step 5 a-c: the path to CF-3 violates; SCI-1 behind CF-2 is selected."""
    index = section7()
    index.put_nst(nst("188.3.67.3", 8, bandwidth=1000, jitter=from_ms(1), loss_rate=0))
    index.put_nst(nst(CF3, 6, **path_extra))
    full, _ = both(index, request(Requirement(hard)))
    assert full.csci_id == SCI1
    excluded = full.candidate(SCI3)
    assert (excluded.reason, excluded.detail) == (reason, detail)
    assert to_ms(excluded.tst) == 12  # type: ignore[arg-type]


def test_latency_constraint_is_on_tst() -> None:
    """6.2.3 Step 5d / 6.2.4 Delay Budget: TST 13 > 12.5 excluded, TST 12 kept."""
    req = Requirement(HardConstraints(max_latency=from_ms("12.5")))
    full, _ = both(section7(), request(req))
    assert full.csci_id == SCI3
    assert full.candidate(SCI1).reason is R.LATENCY_ABOVE_MAXIMUM
    assert full.candidate(SCI1).detail == "TST 13.000 ms > 12.500 ms"


def test_expired_entry_is_treated_as_gas_zero() -> None:
    """6.2.1 soft state: past Expiry Time the entry is dropped at Step 1 and listed as stale."""
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, 5, expiry=NOW - 1))
    full, _ = both(index, request())
    assert full.csci_id == SCI1
    report = full.candidate(SCI3)
    assert report.reason is R.ENTRY_EXPIRED
    assert {u.condition for u in report.unusable} == {ValueCondition.STALE}
    assert both(section7(), request(now=EXPIRY))[0].csci_id is None


@pytest.mark.parametrize(
    ("health", "hard", "reason"),
    [
        (Health.UNHEALTHY, HardConstraints(), R.INSTANCE_UNHEALTHY),
        (Health.UNKNOWN, HardConstraints(), R.INSTANCE_UNHEALTHY),
        (Health.DEGRADED, HardConstraints(accept_degraded=False), R.DEGRADED_NOT_ACCEPTED),
        (Health.DEGRADED, HardConstraints(), None),
    ],
)
def test_health_filter(
    health: Health, hard: HardConstraints, reason: ExclusionReason | None
) -> None:
    """Step 1 health filter: UNHEALTHY/unknown never, DEGRADED unless not accepted."""
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, 5, health=health))
    req = Requirement(hard)
    settings = SelectionSettings(fallback=FallbackPolicy(relax_constraints=False))
    full, _ = both(index, request(req), settings)
    assert full.candidate(SCI3).reason is reason


def test_time_sync_window_excludes_older_nst_entries() -> None:
    """6.2.2: an NST entry older than the CST entry by more than 30 s is not combined."""
    index = section7()
    index.put_nst(nst(CF3, 6, last_updated=NOW - 30))
    assert both(index, request())[0].csci_id == SCI3  # exactly at the window: combined
    index.put_nst(nst(CF3, 6, last_updated=NOW - 30.5))
    full, _ = both(index, request())
    assert full.csci_id == SCI1
    report = full.candidate(SCI3)
    assert report.reason is R.NETWORK_ENTRY_OUT_OF_SYNC
    assert [u.metric for u in report.unusable] == [Metric.NETWORK_DELAY]
    wider = SelectionSettings(time_sync_window=60)
    assert both(index, request(), wider)[0].csci_id == SCI3


def test_newer_nst_entry_is_combined_with_an_older_cst_entry() -> None:
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, 5, last_updated=NOW - 50))
    assert both(index, request())[0].csci_id == SCI3


def test_network_entry_lifetime_makes_the_path_unusable() -> None:
    index = section7()
    index.put_nst(nst(CF3, 6, last_updated=NOW - 20))
    settings = SelectionSettings(network_entry_lifetime=10)
    full, _ = both(index, request(), settings)
    assert full.candidate(SCI3).reason is R.NO_NETWORK_PATH
    assert full.csci_id == SCI1


def test_missing_nst_entry_and_unknown_egress_exclude_at_step_3() -> None:
    index = section7()
    index.remove_nst("10.0.0.1", CF3)  # type: ignore[arg-type]
    index.put_cst(cst("9.9.9.9:1", 900, 1, 1))
    full, _ = both(index, request())
    assert full.candidate(SCI3).reason is R.NO_NETWORK_PATH
    assert full.candidate("9.9.9.9:1").reason is R.NO_NETWORK_PATH
    assert full.csci_id == SCI1
