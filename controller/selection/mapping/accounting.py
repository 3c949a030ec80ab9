"""P11 accounting per session, turn and step, pacing and budget thresholds (7.3, 8.1 P11).

Consumption is monotone (7.5, MSG-15): a report is never negative, a repeated report id is
charged once. MSG-15 is sent at the completion of a step and again at the end of a turn: a
turn-scope report states the turn's whole consumption, which includes the step reports of
that turn, so a turn's line is the larger of the sum of its step reports and its turn report,
and the session is charged only what that adds (consumption is never counted twice). The
change cost of a move is charged to the session it serves once the move happened (M46).
Pacing holds back a reserve for the remaining steps (M38); a threshold crossing paces or
refuses the step (DP9, T9). Every function returns a new value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType

from controller.selection.mapping.context import BudgetPacing
from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    BudgetKind,
    Scope,
    ThresholdAction,
)


@dataclass(frozen=True, slots=True)
class BudgetLine:
    """One dimension at one level (budget-account): consumed includes change costs."""

    dimension: BudgetDimension
    consumed: float = 0.0
    limit: float | None = None
    kind: BudgetKind = BudgetKind.CEILING
    change_cost: float = 0.0

    @property
    def remaining(self) -> float | None:
        """remaining: limit minus consumed (negative once a target is overrun)."""
        return None if self.limit is None else self.limit - self.consumed

    def charged(self, amount: float, *, change: bool = False) -> BudgetLine:
        """The line after ``amount`` is consumed; negative amounts are refused (monotone)."""
        if amount < 0:
            raise ValueError(f"consumption is monotone: {amount} {self.dimension.value}")
        return replace(
            self,
            consumed=self.consumed + amount,
            change_cost=self.change_cost + amount if change else self.change_cost,
        )


Lines = Mapping[BudgetDimension, BudgetLine]
_NO_LINES: Lines = MappingProxyType({})


def _charge(lines: Lines, amounts: Mapping[BudgetDimension, float], *, change: bool) -> Lines:
    updated = dict(lines)
    for dimension, amount in amounts.items():
        line = updated.get(dimension, BudgetLine(dimension))
        updated[dimension] = line.charged(amount, change=change)
    return MappingProxyType(updated)


@dataclass(frozen=True, slots=True)
class Consumption:
    """An accounting report (MSG-15) attributed to a session, turn and step; ``scope`` says
    what it totals: one step (the default), the whole turn, or the whole session."""

    report_id: str
    amounts: Mapping[BudgetDimension, float]
    turn_id: int | None = None
    step_id: int | None = None
    scope: Scope = Scope.STEP


Totals = Mapping[BudgetDimension, float]
_NO_TOTALS: Totals = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class SessionAccount:
    """The accounting of one session: lines per session, per turn and per (turn, step)."""

    session: Lines = field(default_factory=lambda: _NO_LINES)
    turns: Mapping[int, Lines] = field(default_factory=lambda: MappingProxyType({}))
    steps: Mapping[tuple[int, int], Lines] = field(default_factory=lambda: MappingProxyType({}))
    reports: frozenset[str] = frozenset()
    unattributed: int = 0
    step_totals: Mapping[int, Totals] = field(default_factory=lambda: MappingProxyType({}))
    turn_totals: Mapping[int, Totals] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def opened(cls, limits: Mapping[BudgetDimension, tuple[float, BudgetKind]]) -> SessionAccount:
        """A new account with the session limits of the descriptor (P0)."""
        lines = {d: BudgetLine(d, limit=limit, kind=kind) for d, (limit, kind) in limits.items()}
        return cls(session=MappingProxyType(lines))

    def line(self, dimension: BudgetDimension) -> BudgetLine:
        """The session line of ``dimension`` (an empty line when none was opened)."""
        return self.session.get(dimension, BudgetLine(dimension))


def _merged(
    totals: Mapping[int, Totals], turn: int, amounts: Totals, *, add: bool
) -> Mapping[int, Totals]:
    """The per-turn totals with ``amounts`` added (step reports) or taken as a new maximum
    (turn reports: a later turn report restates the turn, monotone)."""
    found = dict(totals.get(turn, _NO_TOTALS))
    for dimension, amount in amounts.items():
        before = found.get(dimension, 0.0)
        found[dimension] = before + amount if add else max(before, amount)
    return MappingProxyType({**totals, turn: MappingProxyType(found)})


def _turn_growth(
    account: SessionAccount, turn: int, steps: Mapping[int, Totals], turns: Mapping[int, Totals]
) -> dict[BudgetDimension, float]:
    """What the turn's line grows by: max(step sum, turn report) after, less before."""
    growth: dict[BudgetDimension, float] = {}
    old_steps, old_turn = account.step_totals.get(turn, {}), account.turn_totals.get(turn, {})
    new_steps, new_turn = steps.get(turn, {}), turns.get(turn, {})
    for dimension in set(new_steps) | set(new_turn):
        before = max(old_steps.get(dimension, 0.0), old_turn.get(dimension, 0.0))
        after = max(new_steps.get(dimension, 0.0), new_turn.get(dimension, 0.0))
        growth[dimension] = after - before
    return growth


def _checked(report: Consumption) -> None:
    for dimension, amount in report.amounts.items():
        if amount < 0:
            raise ValueError(f"consumption is monotone: {amount} {dimension.value}")


def charge(account: SessionAccount, report: Consumption) -> SessionAccount:
    """Attribute one report to the session, its turn and its step (P11, M13, MSG-15).

    A report already charged is ignored. A report without a turn is charged to the session
    only and counted as unattributed, which degrades only the precision of later decisions.
    A step report adds to its step and to the sum of its turn's step reports; a turn report
    restates its turn; either way the turn's line is the larger of the two, and the session
    is charged the growth of that line. A session report restates the session: only what it
    exceeds the consumption reported so far is charged.
    """
    if report.report_id in account.reports:
        return account
    _checked(report)
    reports = account.reports | {report.report_id}
    turn = report.turn_id
    if report.scope is Scope.SESSION or turn is None:
        amounts = dict(report.amounts)
        if report.scope is Scope.SESSION:
            for dimension, amount in report.amounts.items():
                line = account.session.get(dimension, BudgetLine(dimension))
                amounts[dimension] = max(amount - (line.consumed - line.change_cost), 0.0)
        session = _charge(account.session, amounts, change=False)
        unattributed = account.unattributed + (turn is None)
        return replace(account, session=session, reports=reports, unattributed=unattributed)
    steps, step_totals, turn_totals = account.steps, account.step_totals, account.turn_totals
    if report.scope is Scope.TURN:
        turn_totals = _merged(turn_totals, turn, report.amounts, add=False)
    else:
        step_totals = _merged(step_totals, turn, report.amounts, add=True)
        if report.step_id is not None:
            key = (turn, report.step_id)
            steps = MappingProxyType(
                {**steps, key: _charge(steps.get(key, _NO_LINES), report.amounts, change=False)}
            )
    updated = replace(account, step_totals=step_totals, turn_totals=turn_totals)
    growth = _turn_growth(account, turn, step_totals, turn_totals)
    turns = MappingProxyType(
        {**account.turns, turn: _charge(account.turns.get(turn, _NO_LINES), growth, change=False)}
    )
    session = _charge(account.session, growth, change=False)
    return replace(updated, session=session, turns=turns, steps=steps, reports=reports)


def charge_change(
    account: SessionAccount, dimension: BudgetDimension, amount: float
) -> SessionAccount:
    """Charge the cost of a change of instance to the session it serves (M46)."""
    session = _charge(account.session, {dimension: amount}, change=True)
    return replace(account, session=session)


def reserve(line: BudgetLine, pacing: BudgetPacing) -> float:
    """The budget held back for the remaining steps: a share of what remains (M38)."""
    remaining = line.remaining
    if remaining is None or remaining <= 0:
        return 0.0
    return remaining * pacing.reserve_fraction


def allowance(line: BudgetLine, pacing: BudgetPacing, remaining_steps: int) -> float | None:
    """What the next step may spend (M38): the remaining budget less the reserve, spread over
    the remaining steps unless the session may spend unevenly. None: no limit."""
    remaining = line.remaining
    if remaining is None:
        return None
    spendable = max(remaining - reserve(line, pacing), 0.0)
    if pacing.uneven_spending:
        return spendable
    return spendable / max(remaining_steps, 1)


class Pace(StrEnum):
    """What DP9 decides for the next step."""

    PROCEED = "proceed"
    NOTIFY = "notify"
    PACE = "pace"
    REFUSE = "refuse"


_ORDER = (ThresholdAction.NOTIFY, ThresholdAction.PACE, ThresholdAction.REFUSE)


def crossed(line: BudgetLine, pacing: BudgetPacing) -> tuple[float, ThresholdAction] | None:
    """The strongest threshold the consumed share has reached (DP9, T9), None if none."""
    if not line.limit:
        return None
    share = line.consumed / line.limit
    reached = [(f, a) for f, a in pacing.thresholds if share >= f]
    if not reached:
        return None
    return max(reached, key=lambda item: (_ORDER.index(item[1]), item[0]))


def budget_decision(
    line: BudgetLine, pacing: BudgetPacing, expected: float, remaining_steps: int
) -> Pace:
    """DP9: proceed, notify, pace or refuse the next step expected to cost ``expected``.

    A ceiling the step would overrun refuses it; a threshold crossed applies its action; a
    step above its paced allowance is paced.
    """
    remaining = line.remaining
    if line.kind is BudgetKind.CEILING and remaining is not None and expected > remaining:
        return Pace.REFUSE
    threshold = crossed(line, pacing)
    if threshold is not None and threshold[1] is ThresholdAction.REFUSE:
        return Pace.REFUSE
    limit = allowance(line, pacing, remaining_steps)
    if threshold is not None and threshold[1] is ThresholdAction.PACE:
        return Pace.PACE
    if limit is not None and expected > limit:
        return Pace.PACE
    if threshold is not None:
        return Pace.NOTIFY
    return Pace.PROCEED
