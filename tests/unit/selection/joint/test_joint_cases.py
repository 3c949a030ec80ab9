"""Joint selection cases the other modules leave out (service-metrics-op 6.2.4, 6.2.5).

Fallback Level 1 steps not covered in test_fallback (reputation, bandwidth, jitter, loss rate
with the draft's amounts, their positions in the default order and their cumulative
application), and the weighted objective with n(x) = 0.5 when the candidates' own bounds are
flat.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from controller.selection.joint import (
    DecidedBy,
    FallbackLevel,
    HardConstraints,
    Metric,
    RelaxationStep,
    Requirement,
    ResultKind,
    SelectionIndex,
    TieBreak,
    Weights,
    from_ms,
)
from tests.unit.selection.joint.builders import CF2, CF3, SCI1, SCI3, both, cst, nst, request

Step = RelaxationStep


def _index(
    sci1: dict[str, Any], sci3: dict[str, Any], cf2: dict[str, Any], cf3: dict[str, Any]
) -> SelectionIndex:
    """The ARS part of section 7.1 (TST 13 and 12 ms) with extra metrics."""
    index = SelectionIndex()
    index.put_cst(cst(SCI1, 400, 5, 10, **sci1))
    index.put_cst(cst(SCI3, 600, 6, 5, **sci3))
    index.put_nst(nst(CF2, 8, **cf2))
    index.put_nst(nst(CF3, 6, **cf3))
    return index


# Each case: a hard constraint that excludes both candidates, the metrics that make SCI-1
# pass once the step has loosened it by the draft's amount (1 point or 20 %), and the record.
LEVEL_1 = [
    pytest.param(
        HardConstraints(min_reputation=7),
        _index({"reputation": 6}, {"reputation": 5}, {}, {}),
        (Step.RELAX_REPUTATION, 7, 6),
        id="reputation-minus-1-point",
    ),
    pytest.param(
        HardConstraints(min_bandwidth=500),
        _index({}, {}, {"bandwidth": 450}, {"bandwidth": 300}),
        (Step.RELAX_BANDWIDTH, 500, Decimal(400)),
        id="bandwidth-minus-20-percent",
    ),
    pytest.param(
        HardConstraints(max_jitter=from_ms(1)),
        _index({}, {}, {"jitter": from_ms("1.2")}, {"jitter": from_ms(2)}),
        (Step.RELAX_JITTER, 1_000, 1_200),
        id="jitter-plus-20-percent",
    ),
    pytest.param(
        HardConstraints(max_loss_rate=100),
        _index({}, {}, {"loss_rate": 120}, {"loss_rate": 200}),
        (Step.RELAX_LOSS_RATE, 100, Decimal(120)),
        id="loss-rate-plus-20-percent",
    ),
]


@pytest.mark.parametrize(("hard", "index", "record"), LEVEL_1)
def test_level_1_step_with_the_drafts_amount(
    hard: HardConstraints, index: SelectionIndex, record: tuple[Step, Any, Any]
) -> None:
    """6.2.5 Level 1 items 3, 5, 6, 7: the one step of the constraint in force is applied,
    reported with the threshold before and after; the re-run selects SCI-1."""
    full, _ = both(index, request(Requirement(hard)))
    assert (full.result, full.fallback_level) == (
        ResultKind.SELECTED,
        FallbackLevel.RELAX_CONSTRAINTS,
    )
    assert full.csci_id == SCI1
    step, before, after = record
    assert [(r.position, r.step, r.round, r.before, r.after) for r in full.relaxations] == [
        (1, step, 1, before, after)
    ]


def test_level_1_steps_apply_cumulatively_in_the_default_order() -> None:
    """Reputation (item 3) alone is not enough: bandwidth (item 5) is loosened on top of it,
    and both are reported in the order applied; steps of constraints not in force are not."""
    index = _index({"reputation": 6}, {"reputation": 5}, {"bandwidth": 450}, {"bandwidth": 300})
    hard = HardConstraints(min_reputation=7, min_bandwidth=500)
    full, _ = both(index, request(Requirement(hard)))
    assert full.csci_id == SCI1
    assert full.fallback_level is FallbackLevel.RELAX_CONSTRAINTS
    assert [(r.position, r.step, r.before, r.after) for r in full.relaxations] == [
        (1, Step.RELAX_REPUTATION, 7, 6),
        (2, Step.RELAX_BANDWIDTH, 500, Decimal(400)),
    ]


def test_level_1_exhausted_reports_every_step_tried_then_service_unavailable() -> None:
    """Loss rate 150 % over the limit: one 20 % step does not reach it; with network-only
    steering not applicable (the candidates have usable computing metrics) the request is
    unavailable, and the step tried is still reported."""
    index = _index({}, {}, {"loss_rate": 250}, {"loss_rate": 300})
    full, _ = both(index, request(Requirement(HardConstraints(max_loss_rate=100))))
    assert full.csci_id is None
    assert full.result is ResultKind.SERVICE_UNAVAILABLE
    assert [(r.step, r.before, r.after) for r in full.relaxations] == [
        (Step.RELAX_LOSS_RATE, 100, Decimal(120))
    ]


def test_weighted_objective_flat_candidate_bounds_give_half() -> None:
    """6.2.4: n(x) = 0.5 when max = min, here with the bounds taken from the Candidate_Set
    (no configured normalization): both prices 5 score 0.5, the GAS tie-break decides."""
    index = _index({}, {}, {}, {})
    index.put_cst(cst(SCI1, 400, 5, 5))
    requirement = Requirement(weights=Weights(total_service_time=0, price=1))
    full, _ = both(index, request(requirement))
    assert full.candidate(SCI1).score == full.candidate(SCI3).score == 0.5
    assert full.normalization_from_candidates
    assert (full.csci_id, full.decided_by) == (SCI3, DecidedBy.TIE_BREAK)
    assert full.deciding_tie_break is TieBreak.HIGHEST_GAS


def test_the_estimated_values_of_the_selected_entry_reach_the_outcome() -> None:
    """service-metrics-op 5.3.2: a Computing Time nobody measured is an estimate, and the
    decision says so whichever path (explain or the indexed select) made it."""
    index = SelectionIndex()
    index.put_cst(cst(SCI1, 400, 1, estimated=(Metric.COMPUTING_TIME,)))
    index.put_cst(cst(SCI3, 400, 6))
    index.put_nst(nst(CF2, 8))
    index.put_nst(nst(CF3, 8))
    full, fast = both(index, request())
    assert full.csci_id == fast.csci_id == SCI1
    assert full.estimated == fast.estimated == (Metric.COMPUTING_TIME,)
    assert full.candidate(SCI3).entry.estimated == ()
    index.put_cst(cst(SCI1, 400, 9, estimated=(Metric.COMPUTING_TIME,)))
    full, fast = both(index, request())
    assert (full.csci_id, full.estimated, fast.estimated) == (SCI3, (), ())
