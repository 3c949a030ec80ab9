"""agents.csma.aggregate: per-SCI entries and the per-site aggregate of section 8."""

from __future__ import annotations

from decimal import Decimal

from agents.csma.aggregate import per_sci, per_site
from agents.csma.values import CsciId, EntryKey, Health, SciMetrics
from tests.unit.csma.values import key, metrics


def _keyed(*items: SciMetrics) -> dict[EntryKey, SciMetrics]:
    return {m.key: m for m in items}


def test_per_sci_keeps_each_scis_values() -> None:
    entries = per_sci(_keyed(metrics("a", 40, "12.5"), metrics("b", 0, None)))
    assert entries[key("a")].computing_time == Decimal("12.5")
    assert not entries[key("a")].aggregated
    assert entries[key("b")].computing_time == 0


def test_the_site_entry_sums_gas_and_weights_computing_time_by_gas() -> None:
    site = per_site(
        _keyed(
            metrics("a", 300, "10"),
            metrics("b", 100, "30"),
            metrics("c", 0, "500", Health.UNHEALTHY),
        ),
        CsciId("SS3"),
        "SS3",
    )
    (only,) = site.values()
    assert (only.csci_id, only.gas, only.aggregated) == ("SS3", 400, True)
    assert only.computing_time == Decimal("15.000")  # (300*10 + 100*30) / 400
    assert only.health is Health.HEALTHY
    assert only.source == "site:SS3"


def test_a_site_without_slots_takes_the_plain_mean_and_the_best_health() -> None:
    site = per_site(
        _keyed(metrics("a", 0, "10", Health.DEGRADED), metrics("b", 0, "30", Health.UNKNOWN)),
        CsciId("SS3"),
        "SS3",
    )
    (only,) = site.values()
    assert (only.gas, only.computing_time, only.health) == (0, Decimal(20), Health.DEGRADED)


def test_one_aggregate_per_service() -> None:
    site = per_site(_keyed(metrics("a", 1), metrics("b", 2, cs="LLM")), CsciId("SS3"), "SS3")
    assert sorted(site) == [key("SS3"), key("SS3", "LLM")]
