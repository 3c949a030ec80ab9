"""Step 6 (service-metrics-op 6.2.3) and the weighted objective (6.2.4)."""

from __future__ import annotations

import pytest

from controller.selection.joint import (
    Bounds,
    DecidedBy,
    Metric,
    Objective,
    Requirement,
    SelectionIndex,
    SelectionSettings,
    SoftConstraint,
    TieBreak,
    Weights,
    from_ms,
)
from controller.selection.joint.ranking import normalize
from tests.unit.selection.joint.builders import (
    CF2,
    CF3,
    SCI1,
    SCI3,
    both,
    cst,
    nst,
    request,
    section7,
)


def test_normalization_is_min_max_clamped_and_half_when_flat() -> None:
    assert normalize(5, Bounds(0, 10)) == 0.5
    assert normalize(-3, Bounds(0, 10)) == 0.0
    assert normalize(30, Bounds(0, 10)) == 1.0
    assert normalize(7, Bounds(4, 4)) == 0.5
    with pytest.raises(ValueError, match="maximum below"):
        Bounds(3, 2)


def test_default_score_is_pure_tst_over_candidate_bounds() -> None:
    """w1 = 1: n(TST) with bounds from the Candidate_Set, flagged in the outcome."""
    full, _ = both(section7(), request())
    assert full.candidate(SCI3).score == 0.0
    assert full.candidate(SCI1).score == 1.0
    assert full.normalization_from_candidates


def test_weighted_objective_with_configured_bounds() -> None:
    """Score = w1 n(TST) + w2 n(Price): price 10 vs 5 over [0, 20], TST over [0, 20 ms]."""
    requirement = Requirement(
        weights=Weights(total_service_time=1, price=4),
        normalization={
            Metric.TOTAL_SERVICE_TIME: Bounds(0, from_ms(20)),
            Metric.PRICE: Bounds(0, 20),
        },
    )
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, 15))
    full, fast = both(index, request(requirement))
    assert full.candidate(SCI1).score == pytest.approx(13 / 20 + 4 * 0.5)
    assert full.candidate(SCI3).score == pytest.approx(12 / 20 + 4 * 0.75)
    assert full.csci_id == SCI1
    assert not full.normalization_from_candidates
    assert fast.complete  # price weight: explain is the path


def test_weighted_objective_max_equals_min_gives_half() -> None:
    requirement = Requirement(
        weights=Weights(total_service_time=0, gas=1),
        normalization={Metric.GAS: Bounds(500, 500)},
    )
    full, _ = both(section7(), request(requirement))
    assert full.candidate(SCI1).score == full.candidate(SCI3).score == 0.5
    assert full.decided_by is DecidedBy.TIE_BREAK
    assert full.deciding_tie_break is TieBreak.HIGHEST_GAS
    assert full.csci_id == SCI3


def test_maximized_metric_uses_one_minus_n() -> None:
    requirement = Requirement(
        weights=Weights(total_service_time=0, reputation=1),
        normalization={Metric.REPUTATION: Bounds(0, 10)},
    )
    index = section7()
    index.put_cst(cst(SCI1, 400, 5, 10, reputation=8))
    index.put_cst(cst(SCI3, 600, 6, 5, reputation=2))
    full, _ = both(index, request(requirement))
    assert full.candidate(SCI1).score == pytest.approx(0.2)
    assert full.candidate(SCI3).score == pytest.approx(0.8)
    assert full.csci_id == SCI1


def test_unknown_value_takes_the_worst_term() -> None:
    requirement = Requirement(
        weights=Weights(total_service_time=0, price=1), normalization={Metric.PRICE: Bounds(0, 4)}
    )
    index = section7()
    index.put_cst(cst(SCI3, 600, 6, None))
    index.put_cst(cst(SCI1, 400, 5, 2))
    full, _ = both(index, request(requirement))
    assert full.candidate(SCI3).score == 1.0
    assert full.csci_id == SCI1


@pytest.mark.parametrize(
    ("objective", "winner"),
    [
        (Objective.MAXIMIZE_SECURITY_LEVEL, SCI1),
        (Objective.MAXIMIZE_REPUTATION, SCI1),
        (Objective.MINIMIZE_PRICE, SCI3),
        (Objective.MAXIMIZE_GAS, SCI3),
        (Objective.MAXIMIZE_BANDWIDTH, SCI1),
        (Objective.MINIMIZE_JITTER, SCI1),
        (Objective.MINIMIZE_LOSS_RATE, SCI1),
        (Objective.MINIMIZE_LATENCY, SCI3),
    ],
)
def test_each_objective(objective: Objective, winner: str) -> None:
    """6.2.3 Step 6 items 1-8; SCI-1 is better on the security/reputation/network side."""
    index = section7()
    index.put_cst(cst(SCI1, 400, 5, 10, security_level=9, reputation=9))
    index.put_cst(cst(SCI3, 600, 6, 5, security_level=3, reputation=3))
    index.put_nst(nst(CF2, 8, bandwidth=900, jitter=from_ms(1), loss_rate=10))
    index.put_nst(nst(CF3, 6, bandwidth=100, jitter=from_ms(3), loss_rate=500))
    full, _ = both(index, request(Requirement(objectives=(objective,))))
    assert full.csci_id == winner
    assert full.decided_by is DecidedBy.OBJECTIVE
    assert full.deciding_objective is objective


def test_objective_zero_is_a_value_not_an_absent_objective() -> None:
    """MUST NOT be inferred from 0: Price 0 is the best price, not 'no objective'."""
    index = section7()
    index.put_cst(cst(SCI1, 400, 5, 0))
    full, _ = both(index, request(Requirement(objectives=(Objective.MINIMIZE_PRICE,))))
    assert full.csci_id == SCI1
    assert both(index, request())[0].csci_id == SCI3  # no objective: TST decides


def test_objectives_apply_in_list_order() -> None:
    index = section7()
    index.put_cst(cst(SCI1, 900, 5, 10))
    req = Requirement(objectives=(Objective.MAXIMIZE_GAS, Objective.MINIMIZE_PRICE))
    assert both(index, request(req))[0].csci_id == SCI1
    req = Requirement(objectives=(Objective.MINIMIZE_PRICE, Objective.MAXIMIZE_GAS))
    assert both(index, request(req))[0].csci_id == SCI3


def test_soft_constraint_adds_a_penalty_but_keeps_the_candidate() -> None:
    req = Requirement(soft=(SoftConstraint(Metric.PRICE, 8, 2.0),))
    full, _ = both(section7(), request(req))
    assert full.candidate(SCI1).feasible
    assert full.candidate(SCI1).violated_soft == (Metric.PRICE,)
    assert full.candidate(SCI1).score == 3.0
    req = Requirement(soft=(SoftConstraint(Metric.GAS, 500, 2.0),))
    full, _ = both(section7(), request(req))
    assert full.candidate(SCI1).violated_soft == (Metric.GAS,)
    assert full.candidate(SCI3).violated_soft == ()


def _tied(
    gas: tuple[int, int], price: tuple[int | None, int | None], rep: tuple[int, int]
) -> SelectionIndex:
    """Both ARS candidates at TST 12 ms."""
    index = SelectionIndex()
    index.put_cst(cst(SCI1, gas[0], 4, price[0], reputation=rep[0]))
    index.put_cst(cst(SCI3, gas[1], 6, price[1], reputation=rep[1]))
    index.put_nst(nst(CF2, 8))
    index.put_nst(nst(CF3, 6))
    return index


@pytest.mark.parametrize(
    ("index", "rule", "winner"),
    [
        (_tied((400, 600), (5, 5), (5, 5)), TieBreak.HIGHEST_GAS, SCI3),
        (_tied((600, 600), (4, 5), (5, 5)), TieBreak.LOWEST_PRICE, SCI1),
        (_tied((600, 600), (5, None), (5, 5)), TieBreak.LOWEST_PRICE, SCI1),
        (_tied((600, 600), (5, 5), (4, 9)), TieBreak.HIGHEST_REPUTATION, SCI3),
    ],
)
def test_default_tie_breaks_in_draft_order(
    index: SelectionIndex, rule: TieBreak, winner: str
) -> None:
    full, _ = both(index, request())
    assert full.csci_id == winner
    assert full.decided_by is DecidedBy.TIE_BREAK
    assert full.deciding_tie_break is rule


def test_configured_tie_break_order() -> None:
    index = _tied((400, 600), (4, 5), (5, 5))
    req = Requirement(tie_breaks=(TieBreak.LOWEST_PRICE, TieBreak.HIGHEST_GAS))
    assert both(index, request(req))[0].csci_id == SCI1


def test_random_tie_break_is_reproducible_with_a_seed() -> None:
    """Tie-break 4: a seeded draw per (seed, decision number, CSCI-ID); same inputs, same pick."""
    index = _tied((600, 600), (5, 5), (5, 5))
    by_seed = []
    for seed in range(12):
        settings = SelectionSettings(random_seed=seed)
        first, second = (both(index, request(), settings)[0] for _ in range(2))
        assert first.csci_id == second.csci_id
        assert first.decided_by is DecidedBy.TIE_BREAK
        assert first.deciding_tie_break is TieBreak.RANDOM
        by_seed.append(first.csci_id)
    assert set(by_seed) == {SCI1, SCI3}  # the draw does pick both over seeds
    by_turn = [both(index, request(turn=t))[0].csci_id for t in range(12)]
    assert by_turn == [both(index, request(turn=t))[0].csci_id for t in range(12)]
    assert set(by_turn) == {SCI1, SCI3}  # and over decision numbers


def test_a_plausibility_penalty_is_added_to_the_score() -> None:
    """Section 9: SCI-3 (TST 12, score 0) flagged with 1.5 loses to SCI-1 (TST 13, score 1)."""
    full, fast = both(section7(), request(penalties={SCI3: 1.5}))
    assert (full.csci_id, full.decided_by) == (SCI1, DecidedBy.SCORE)
    assert full.candidate(SCI3).score == 1.5
    assert fast.complete  # a score-first requirement with a penalty evaluates everything
    full, _ = both(section7(), request(penalties={SCI3: 0.5}))
    assert full.csci_id == SCI3
    assert full.candidate(SCI3).score == 0.5


def test_a_penalty_breaks_a_latency_tie_on_the_fast_path() -> None:
    """minimize-latency first: the penalty only orders candidates with equal TST."""
    index = section7(sci3=(600, 7))  # SCI-3 TST 13 = SCI-1 TST 13
    latency = Requirement(objectives=(Objective.MINIMIZE_LATENCY,))
    full, fast = both(index, request(latency))
    assert full.csci_id == SCI3  # highest GAS breaks the tie
    full, fast = both(index, request(latency, penalties={SCI3: 0.1}))
    assert (full.csci_id, full.decided_by) == (SCI1, DecidedBy.SCORE)
    assert not fast.complete
