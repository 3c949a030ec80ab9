"""The TST index and the fast select: agreement with explain on seeded random tables."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from controller.selection.joint import (
    Bounds,
    CstEntry,
    GeoFence,
    HardConstraints,
    Health,
    LoadDistribution,
    Metric,
    NstEntry,
    Objective,
    PolicyOverride,
    ProviderPreference,
    Requirement,
    SelectionIndex,
    SelectionRequest,
    SelectionSettings,
    SoftConstraint,
    TieBreak,
    Weights,
    explain,
    from_ms,
    from_us,
    select,
)
from controller.selection.joint.gate import Gate
from controller.selection.joint.overrides import restrict
from controller.selection.joint.screening import screen
from controller.types import CsciId, ForwarderId
from tests.unit.selection.joint.builders import ARS, NOW

INGRESSES = [ForwarderId(f"in-{n}") for n in range(3)]
REQUIREMENTS = [
    Requirement(),
    Requirement(HardConstraints(min_security_level=5, max_price=50)),
    Requirement(HardConstraints(min_bandwidth=500, max_loss_rate=400, max_jitter=from_ms(3))),
    Requirement(HardConstraints(max_latency=from_ms(30), min_reputation=3, accept_degraded=False)),
    Requirement(objectives=(Objective.MINIMIZE_LATENCY, Objective.MAXIMIZE_GAS)),
    Requirement(objectives=(Objective.MINIMIZE_PRICE,)),
    Requirement(tie_breaks=(TieBreak.RANDOM,)),
    Requirement(normalization={Metric.TOTAL_SERVICE_TIME: Bounds(0, from_ms(12))}),
    Requirement(weights=Weights(total_service_time=1, price=1)),
    Requirement(soft=(SoftConstraint(Metric.PRICE, 30, 0.5),)),
    Requirement(overrides=PolicyOverride(geo_fence=GeoFence(frozenset({"r1"})))),
    Requirement(
        overrides=PolicyOverride(provider_preference=ProviderPreference(frozenset({"p0"})))
    ),
    Requirement(overrides=PolicyOverride(load_distribution=LoadDistribution(from_ms(2)))),
    Requirement(hierarchical=True),
    Requirement(session_affinity=True),
]


def _entry(rng: random.Random, number: int, egresses: int) -> CstEntry:
    return CstEntry(
        ARS,
        CsciId(f"sci-{number}"),
        gas=rng.choice([0, 1, 5, 50, 300]),
        computing_time=from_ms(rng.randint(1, 20)),  # coarse: many exact TST ties
        last_updated=NOW - rng.choice([0, 0, 0, 45]),
        expiry=NOW + rng.choice([-1, 60, 60, 60]),
        price=rng.choice([None, 0, 10, 40, 60]),
        reputation=rng.choice([None, 2, 5, 9]),
        security_level=rng.choice([None, 0, 5, 9]),
        health=rng.choice([Health.HEALTHY, Health.HEALTHY, Health.DEGRADED, Health.UNHEALTHY]),
        egress=ForwarderId(f"cf-{rng.randrange(egresses)}"),
        region=rng.choice(["r0", "r1"]),
        provider=rng.choice(["p0", "p1"]),
        under_maintenance=rng.random() < 0.05,
    )


def _path(rng: random.Random, ingress: ForwarderId, egress: int) -> NstEntry:
    return NstEntry(
        ingress,
        ForwarderId(f"cf-{egress}"),
        from_ms(rng.randint(1, 20)),
        NOW - rng.choice([0, 0, 10]),
        jitter=rng.choice([None, from_ms(1), from_ms(5)]),
        bandwidth=rng.choice([None, 100, 800]),
        loss_rate=rng.choice([0, 300, 900]),
    )


def _tables(seed: int, size: int = 60, egresses: int = 8) -> SelectionIndex:
    rng = random.Random(seed)
    index = SelectionIndex()
    for number in range(size):
        index.put_cst(_entry(rng, number, egresses))
    for ingress in INGRESSES:
        for egress in range(egresses):
            if rng.random() < 0.9:
                index.put_nst(_path(rng, ingress, egress))
    return index


def _agree(index: SelectionIndex, seed: int, penalties: dict[CsciId, float] | None = None) -> None:
    settings = SelectionSettings(random_seed=seed)
    for turn, requirement in enumerate(REQUIREMENTS):
        for ingress in INGRESSES:
            req = SelectionRequest(
                ARS,
                ingress,
                NOW,
                requirement,
                affined=CsciId(f"sci-{turn}"),
                turn=turn,
                penalties=penalties or {},
            )
            full = explain(index.cst, index.nst, req, settings)
            fast = select(index, req, settings)
            assert (fast.result, fast.csci_id, fast.egress, fast.tst, fast.decided_by) == (
                full.result,
                full.csci_id,
                full.egress,
                full.tst,
                full.decided_by,
            ), (seed, turn, ingress)
            assert len(full.candidates) == len(index.cst.service(ARS))
            for report in fast.candidates:
                twin = full.candidate(report.csci_id)
                if report.reason is not None:
                    assert (report.reason, report.detail) == (twin.reason, twin.detail)


@pytest.mark.parametrize("seed", range(12))
def test_fast_select_and_explain_agree_on_random_tables(seed: int) -> None:
    _agree(_tables(seed), seed)


@pytest.mark.parametrize("seed", range(8))
def test_agreement_holds_with_plausibility_penalties(seed: int) -> None:
    """Section 9: flagged entries carry a score penalty in both paths."""
    rng = random.Random(500 + seed)
    flagged = rng.sample(range(60), 15)
    _agree(_tables(seed), seed, {CsciId(f"sci-{n}"): rng.choice([0.3, 1.0, 5.0]) for n in flagged})


@pytest.mark.parametrize("seed", range(6))
def test_agreement_holds_after_incremental_updates(seed: int) -> None:
    """The index is maintained through CST and NST changes, withdrawals and re-attachment."""
    rng = random.Random(1000 + seed)
    index = _tables(seed)
    for ingress in INGRESSES:
        select(index, SelectionRequest(ARS, ingress, NOW), SelectionSettings())  # build views
    for _ in range(80):
        action = rng.random()
        if action < 0.4:
            index.put_cst(_entry(rng, rng.randrange(70), 9))
        elif action < 0.5:
            index.remove_cst(ARS, CsciId(f"sci-{rng.randrange(70)}"))
        elif action < 0.9:
            index.put_nst(_path(rng, rng.choice(INGRESSES), rng.randrange(9)))
        else:
            index.remove_nst(rng.choice(INGRESSES), ForwarderId(f"cf-{rng.randrange(9)}"))
    _agree(index, seed)


@pytest.mark.parametrize("seed", range(6))
def test_agreement_holds_when_reports_only_move_values(seed: int) -> None:
    """The steady state of reporting (8): every entry stays behind its egress with GAS > 0
    and its Computing Time and GAS move, often past the head of its egress list."""
    rng = random.Random(2000 + seed)
    index = _tables(seed)
    for ingress in INGRESSES:
        select(index, SelectionRequest(ARS, ingress, NOW), SelectionSettings())  # build views
    for _ in range(3):
        for old in list(index.cst.service(ARS).values()):
            if old.gas > 0:
                moved = from_ms(rng.randint(1, 20))
                index.put_cst(replace(old, computing_time=moved, gas=rng.choice([1, 5, 300])))
        _agree(index, seed)


def test_gate_agrees_with_screening() -> None:
    rng = random.Random(5)
    settings = SelectionSettings(network_entry_lifetime=5)
    for requirement in REQUIREMENTS[:4]:
        gate = Gate(requirement, NOW, settings)
        for number in range(400):
            entry = _entry(rng, number, 3)
            path = _path(rng, INGRESSES[0], 0) if rng.random() < 0.9 else None
            report = screen(entry, path, requirement.hard, NOW, settings)
            if report.feasible:
                report = restrict(report, requirement.overrides) or report
            assert gate.passes(entry, path) == report.feasible


def test_select_examines_few_candidates_of_a_large_service() -> None:
    index = SelectionIndex()
    for number in range(2000):
        index.put_cst(
            CstEntry(
                ARS,
                CsciId(f"sci-{number}"),
                10,
                from_us(1000 + number),
                NOW,
                NOW + 60,
                price=number % 10,
                egress=ForwarderId(f"cf-{number % 200}"),
            )
        )
    for egress in range(200):
        index.put_nst(NstEntry(INGRESSES[0], ForwarderId(f"cf-{egress}"), from_us(egress), NOW))
    fast = select(index, SelectionRequest(ARS, INGRESSES[0], NOW), SelectionSettings())
    assert fast.csci_id == "sci-0"
    assert len(fast.candidates) <= 2
    priced = Requirement(HardConstraints(max_price=0))
    fast = select(index, SelectionRequest(ARS, INGRESSES[0], NOW, priced), SelectionSettings())
    assert fast.csci_id == "sci-0"
    assert not fast.complete
    assert len(fast.candidates) < 40
