"""Policy overrides, affinity, hierarchical selection, load distribution (6.2.4)."""

from __future__ import annotations

from controller.selection.joint import (
    DecidedBy,
    ExclusionReason,
    GeoFence,
    LoadDistribution,
    LoadMethod,
    OverrideMode,
    PolicyOverride,
    ProviderPreference,
    Requirement,
    SelectionIndex,
    from_ms,
)
from controller.types import CsciId
from tests.unit.selection.joint.builders import CF2, SCI1, SCI3, both, cst, nst, request, section7

R = ExclusionReason


def _sited() -> SelectionIndex:
    index = section7()
    index.put_cst(cst(SCI1, 400, 5, 10, region="eu", provider="acme"))
    index.put_cst(cst(SCI3, 600, 6, 5, region="us", provider="globex"))
    return index


def test_geo_fence_prefer_and_restrict() -> None:
    eu = frozenset({"eu"})
    prefer = Requirement(overrides=PolicyOverride(geo_fence=GeoFence(eu)))
    full, _ = both(_sited(), request(prefer))
    assert full.csci_id == SCI1
    assert full.candidate(SCI3).reason is R.OUTSIDE_GEO_FENCE
    nowhere = Requirement(overrides=PolicyOverride(geo_fence=GeoFence(frozenset({"apac"}))))
    assert both(_sited(), request(nowhere))[0].csci_id == SCI3  # prefer: nobody inside
    restrict = GeoFence(frozenset({"apac"}), OverrideMode.RESTRICT)
    req = Requirement(overrides=PolicyOverride(geo_fence=restrict))
    full, _ = both(_sited(), request(req))
    assert full.csci_id is None
    assert {c.reason for c in full.candidates} == {R.OUTSIDE_GEO_FENCE}


def test_provider_preference_prefer_and_restrict() -> None:
    acme = ProviderPreference(frozenset({"acme"}))
    full, _ = both(
        _sited(), request(Requirement(overrides=PolicyOverride(provider_preference=acme)))
    )
    assert full.csci_id == SCI1
    assert full.candidate(SCI3).reason is R.PROVIDER_NOT_PREFERRED
    other = ProviderPreference(frozenset({"initech"}), OverrideMode.RESTRICT)
    req = Requirement(overrides=PolicyOverride(provider_preference=other))
    assert both(_sited(), request(req))[0].csci_id is None


def test_geo_fence_applies_before_provider_preference() -> None:
    """Geo prefers SCI-3 (us); the preferred provider (acme, SCI-1) is outside it."""
    overrides = PolicyOverride(
        geo_fence=GeoFence(frozenset({"us"})),
        provider_preference=ProviderPreference(frozenset({"acme"})),
    )
    full, _ = both(_sited(), request(Requirement(overrides=overrides)))
    assert full.csci_id == SCI3
    assert full.candidate(SCI1).reason is R.OUTSIDE_GEO_FENCE


def test_maintenance_avoidance() -> None:
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, 5, under_maintenance=True))
    full, _ = both(index, request())
    assert full.csci_id == SCI1
    assert full.candidate(SCI3).reason is R.UNDER_MAINTENANCE
    off = Requirement(overrides=PolicyOverride(avoid_maintenance=False))
    assert both(index, request(off))[0].csci_id == SCI3


def test_affinity_selects_the_affined_csci_directly() -> None:
    req = Requirement(session_affinity=True)
    full, fast = both(section7(), request(req, affined=SCI1))
    assert full.csci_id == SCI1
    assert full.decided_by is DecidedBy.AFFINITY
    assert len(fast.candidates) == 1  # no walk needed
    assert both(section7(), request(Requirement(), affined=SCI1))[0].csci_id == SCI3
    gone = section7(sci3=(600, 6))
    gone.put_cst(cst(SCI1, 0, 5, 10))
    assert both(gone, request(req, affined=SCI1))[0].csci_id == SCI3  # not in Candidate_Set


def test_affinity_inside_a_preferred_class() -> None:
    overrides = PolicyOverride(geo_fence=GeoFence(frozenset({"eu"})))
    req = Requirement(session_affinity=True, overrides=overrides)
    full, _ = both(_sited(), request(req, affined=SCI3))
    assert full.csci_id == SCI1  # the affined SCI-3 was dropped by the geo preference


def test_hierarchical_selection_picks_the_best_egress_first() -> None:
    """Egress CF-2 has the lower delay (2 ms); its best CSCI wins although CF-3 has TST 12."""
    index = section7()
    index.put_nst(nst(CF2, 2))
    index.put_cst(cst(SCI1, 400, 15, 10))
    index.put_cst(cst("188.3.67.3:70", 10, 16, 1))
    full, fast = both(index, request(Requirement(hierarchical=True)))
    assert full.hierarchical_egress == CF2
    assert full.csci_id == SCI1
    assert full.candidate(SCI3).reason is R.NOT_ON_SELECTED_EGRESS
    assert fast.complete
    assert both(index, request())[0].csci_id == SCI3  # flat selection finds the optimum


def test_load_distribution_round_robin_within_tolerance() -> None:
    load = LoadDistribution(from_ms(1))
    req = Requirement(overrides=PolicyOverride(load_distribution=load))
    picks = [both(section7(), request(req, turn=t))[0] for t in range(4)]
    assert [p.csci_id for p in picks] == [SCI1, SCI3, SCI1, SCI3]
    assert {p.decided_by for p in picks} == {DecidedBy.LOAD_DISTRIBUTION}
    tight = Requirement(overrides=PolicyOverride(load_distribution=LoadDistribution(from_ms(0))))
    assert {both(section7(), request(tight, turn=t))[0].csci_id for t in range(4)} == {SCI3}


def test_load_distribution_gas_weighted_is_seeded() -> None:
    load = LoadDistribution(from_ms(5), LoadMethod.GAS_WEIGHTED)
    req = Requirement(overrides=PolicyOverride(load_distribution=load))
    picks = [both(section7(), request(req, turn=t))[0].csci_id for t in range(200)]
    assert picks == [both(section7(), request(req, turn=t))[0].csci_id for t in range(200)]
    share = picks.count(CsciId(SCI3)) / len(picks)
    assert 0.45 < share < 0.75  # GAS 600 vs 400
