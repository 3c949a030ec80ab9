"""agents.csma.aggregate: per-SCI entries and the per-site aggregate of section 8."""

from __future__ import annotations

from decimal import Decimal

from agents.csma.aggregate import per_sci, per_site, withheld
from agents.csma.values import Confidence, EntryKey, Estimates, Health, SciMetrics
from controller.types import CsciId, CsId
from tests.unit.csma.values import key, metrics


def _keyed(*items: SciMetrics) -> dict[EntryKey, SciMetrics]:
    return {m.key: m for m in items}


def test_per_sci_keeps_each_scis_values() -> None:
    entries = per_sci(_keyed(metrics("a", 40, "12.5"), metrics("b", 0, None)))
    assert entries[key("a")].computing_time == Decimal("12.5")
    assert not entries[key("a")].aggregated
    assert entries[key("a")].confidence is Confidence.ASSERTED


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


ESTIMATES = Estimates(Decimal(80), ((CsId("ARS"), Decimal("45.5")),))


def test_an_unmeasured_sci_reports_its_services_estimate_as_estimated() -> None:
    entries = per_sci(_keyed(metrics("a", 40, "12.5"), metrics("b", 10, None)), ESTIMATES)
    assert (entries[key("b")].computing_time, entries[key("b")].confidence) == (
        Decimal("45.5"),
        Confidence.ESTIMATED,
    )
    assert entries[key("a")].confidence is Confidence.ASSERTED


def test_the_site_wide_estimate_serves_a_service_without_its_own() -> None:
    entries = per_sci(_keyed(metrics("b", 10, None, cs="LLM")), ESTIMATES)
    assert entries[key("b", "LLM")].computing_time == Decimal(80)
    assert entries[key("b", "LLM")].confidence is Confidence.ESTIMATED


def test_without_an_estimate_an_unmeasured_sci_is_withheld_never_0_ms() -> None:
    metered = _keyed(metrics("a", 40, "12.5"), metrics("b", 10, None))
    entries = per_sci(metered)
    assert sorted(entries) == [key("a")]
    assert withheld(metered, entries) == {key("b")}


def test_a_partly_measured_site_uses_the_measured_members_only() -> None:
    site = per_site(
        _keyed(metrics("a", 300, "10"), metrics("b", 100, None)), CsciId("SS3"), "SS3", ESTIMATES
    )
    (only,) = site.values()
    assert (only.gas, only.computing_time) == (400, Decimal("10.000"))  # b does not count
    assert only.confidence is Confidence.DERIVED


def test_an_unmeasured_site_reports_the_estimate_or_is_withheld() -> None:
    metered = _keyed(metrics("a", 300, None), metrics("b", 100, None))
    (only,) = per_site(metered, CsciId("SS3"), "SS3", ESTIMATES).values()
    assert (only.gas, only.computing_time, only.aggregated) == (400, Decimal("45.5"), True)
    assert only.confidence is Confidence.ESTIMATED
    bare = per_site(metered, CsciId("SS3"), "SS3")
    assert bare == {}
    assert withheld(metered, bare, CsciId("SS3")) == {key("SS3")}
