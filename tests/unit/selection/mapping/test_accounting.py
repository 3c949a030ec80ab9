"""P11 accounting, pacing and thresholds (M13, M15, M38, M46, DP9) and source discounting (14)."""

from __future__ import annotations

import pytest

from controller.selection.mapping import (
    BudgetLine,
    BudgetPacing,
    Consumption,
    Pace,
    SessionAccount,
    SourceAccuracy,
    SourcePolicy,
    allowance,
    budget_decision,
    charge,
    charge_change,
    crossed,
    reserve,
)
from controller.selection.mapping.descriptor import Budget
from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    BudgetKind,
    Role,
    Scope,
    ThresholdAction,
)
from controller.types import SourceId

TIME, TOKENS, COST = BudgetDimension.TIME, BudgetDimension.TOKENS, BudgetDimension.COST


def _account() -> SessionAccount:
    return SessionAccount.opened(
        {TIME: (600.0, BudgetKind.CEILING), COST: (10.0, BudgetKind.TARGET)}
    )


def test_m15_a_budget_states_its_dimension_and_whether_it_is_a_ceiling_or_a_target() -> None:
    ceiling = Budget(TIME, Scope.SESSION, 600.0, BudgetKind.CEILING)
    target = Budget(COST, Scope.SESSION, 10.0, BudgetKind.TARGET)
    assert (ceiling.role, target.role) == (Role.CONSTRAINT, Role.PREFERENCE)


def test_m13_consumption_is_attributed_to_session_turn_and_step() -> None:
    account = charge(
        _account(), Consumption("r1", {TIME: 12.5, TOKENS: 900}, turn_id=2, step_id=30)
    )
    account = charge(account, Consumption("r2", {TIME: 2.5}, turn_id=2, step_id=31))
    assert account.line(TIME).consumed == 15.0
    assert account.line(TIME).remaining == 585.0
    assert account.turns[2][TIME].consumed == 15.0
    assert account.steps[(2, 30)][TOKENS].consumed == 900
    assert account.steps[(2, 31)][TIME].consumed == 2.5


def test_7_5_consumption_is_monotone_and_a_repeated_report_is_charged_once() -> None:
    account = charge(_account(), Consumption("r1", {TIME: 12.5}, turn_id=1, step_id=1))
    assert charge(account, Consumption("r1", {TIME: 12.5}, turn_id=1, step_id=1)) is account
    with pytest.raises(ValueError, match="monotone"):
        charge(account, Consumption("r2", {TIME: -1.0}, turn_id=1, step_id=1))


def test_p11_unattributed_consumption_is_charged_to_the_session_and_counted() -> None:
    account = charge(_account(), Consumption("r1", {TIME: 3.0}))
    assert account.unattributed == 1
    assert account.line(TIME).consumed == 3.0
    assert dict(account.turns) == {}


def test_msg15_a_turn_report_does_not_count_the_turns_step_reports_twice() -> None:
    account = _account()
    for step, amount in ((1, 2.0), (2, 3.0)):
        report = Consumption(f"s{step}", {TIME: amount}, turn_id=1, step_id=step)
        account = charge(account, report)
    turn = Consumption("t1", {TIME: 5.5}, turn_id=1, scope=Scope.TURN)
    account = charge(account, turn)
    assert account.line(TIME).consumed == pytest.approx(5.5)  # not 10.5
    assert account.turns[1][TIME].consumed == pytest.approx(5.5)
    assert charge(account, Consumption("t1b", {TIME: 4.0}, turn_id=1, scope=Scope.TURN)).line(
        TIME
    ).consumed == pytest.approx(5.5)  # a smaller restatement takes nothing back
    late = charge(account, Consumption("s3", {TIME: 1.0}, turn_id=1, step_id=3))
    assert late.line(TIME).consumed == pytest.approx(6.0)  # steps now sum to 6 > 5.5
    other = charge(account, Consumption("t2", {TIME: 1.0}, turn_id=2, scope=Scope.TURN))
    assert other.line(TIME).consumed == pytest.approx(6.5)  # another turn adds


def test_msg15_a_turn_report_before_its_step_reports_is_not_exceeded_by_them() -> None:
    account = charge(_account(), Consumption("t1", {TIME: 5.0}, turn_id=1, scope=Scope.TURN))
    account = charge(account, Consumption("s1", {TIME: 2.0}, turn_id=1, step_id=1))
    assert account.line(TIME).consumed == pytest.approx(5.0)
    assert account.steps[(1, 1)][TIME].consumed == pytest.approx(2.0)


def test_msg15_a_session_report_charges_only_what_it_exceeds() -> None:
    account = charge(_account(), Consumption("s1", {TIME: 2.0}, turn_id=1, step_id=1))
    account = charge_change(account, TIME, 1.0)
    account = charge(account, Consumption("all", {TIME: 5.0}, scope=Scope.SESSION))
    assert account.line(TIME).consumed == pytest.approx(6.0)  # 5.0 reported + 1.0 change


def test_m46_the_change_cost_is_charged_to_the_session_it_serves() -> None:
    account = charge_change(_account(), TIME, 3.008)
    line = account.line(TIME)
    assert (line.consumed, line.change_cost) == (3.008, 3.008)
    assert line.remaining == pytest.approx(596.992)


def test_m38_a_reserve_is_held_back_and_spending_is_paced_over_the_remaining_steps() -> None:
    line = BudgetLine(TIME, consumed=100.0, limit=600.0)
    even = BudgetPacing(reserve_fraction=0.2)
    uneven = BudgetPacing(uneven_spending=True, reserve_fraction=0.2)
    assert reserve(line, even) == 100.0
    assert allowance(line, even, remaining_steps=40) == 10.0
    assert allowance(line, uneven, remaining_steps=40) == 400.0
    assert budget_decision(line, even, expected=8.0, remaining_steps=40) is Pace.PROCEED
    assert budget_decision(line, even, expected=12.0, remaining_steps=40) is Pace.PACE


def test_dp9_thresholds_notify_pace_or_refuse() -> None:
    pacing = BudgetPacing(
        thresholds=(
            (0.5, ThresholdAction.NOTIFY),
            (0.8, ThresholdAction.PACE),
            (0.95, ThresholdAction.REFUSE),
        )
    )

    def at(consumed: float) -> Pace:
        return budget_decision(BudgetLine(TIME, consumed, 100.0), pacing, 1.0, 10)

    assert at(40.0) is Pace.PROCEED
    assert at(60.0) is Pace.NOTIFY
    assert at(85.0) is Pace.PACE
    assert at(96.0) is Pace.REFUSE
    assert crossed(BudgetLine(TIME, 85.0, 100.0), pacing) == (0.8, ThresholdAction.PACE)


def test_dp9_a_ceiling_refuses_a_step_that_would_overrun_it() -> None:
    line = BudgetLine(TIME, consumed=95.0, limit=100.0)
    assert budget_decision(line, BudgetPacing(), expected=6.0, remaining_steps=1) is Pace.REFUSE
    target = BudgetLine(COST, consumed=95.0, limit=100.0, kind=BudgetKind.TARGET)
    assert budget_decision(target, BudgetPacing(), expected=6.0, remaining_steps=1) is Pace.PACE


def test_section14_a_source_repeatedly_wrong_is_discounted() -> None:
    record = SourceAccuracy(SourceId("c-sma-7"))
    for index in range(20):
        record = record.observed(contradicted=index % 2 == 0)
    assert (record.checked, record.contradicted) == (20, 10)
    assert record.discount() == pytest.approx((0.5 - 0.05) / 0.95)
    honest = SourceAccuracy(SourceId("c-sma-1"), checked=100, contradicted=3)
    assert honest.discount() == 0.0
    early = SourceAccuracy(SourceId("c-sma-2"), checked=5, contradicted=5)
    assert early.discount() == 0.0
    always = SourceAccuracy(SourceId("c-sma-3"), checked=10, tail_underreports=10)
    assert always.discount(SourcePolicy(min_checks=10, tolerance=0.05)) == 1.0
