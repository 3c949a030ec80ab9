"""P11 accounting per session, turn and step, pacing and budget thresholds (7.3, 8.1 P11).

Consumption is monotone (7.5, MSG-15): a report is never negative, a repeated report id is
charged once. The change cost of a move is charged to the session it serves (M46). Pacing
holds back a reserve for the remaining steps (M38); a threshold crossing paces or refuses
the step (DP9, T9). Every function returns a new value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType

from controller.selection.mapping.context import BudgetPacing
from controller.selection.mapping.vocabulary import BudgetDimension, BudgetKind, ThresholdAction


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
    """An accounting report (MSG-15) attributed to a session, turn and step."""

    report_id: str
    amounts: Mapping[BudgetDimension, float]
    turn_id: int | None = None
    step_id: int | None = None


@dataclass(frozen=True, slots=True)
class SessionAccount:
    """The accounting of one session: lines per session, per turn and per (turn, step)."""

    session: Lines = field(default_factory=lambda: _NO_LINES)
    turns: Mapping[int, Lines] = field(default_factory=lambda: MappingProxyType({}))
    steps: Mapping[tuple[int, int], Lines] = field(default_factory=lambda: MappingProxyType({}))
    reports: frozenset[str] = frozenset()
    unattributed: int = 0

    @classmethod
    def opened(cls, limits: Mapping[BudgetDimension, tuple[float, BudgetKind]]) -> SessionAccount:
        """A new account with the session limits of the descriptor (P0)."""
        lines = {d: BudgetLine(d, limit=limit, kind=kind) for d, (limit, kind) in limits.items()}
        return cls(session=MappingProxyType(lines))

    def line(self, dimension: BudgetDimension) -> BudgetLine:
        """The session line of ``dimension`` (an empty line when none was opened)."""
        return self.session.get(dimension, BudgetLine(dimension))


def charge(account: SessionAccount, report: Consumption) -> SessionAccount:
    """Attribute one report to the session, its turn and its step (P11, M13).

    A report already charged is ignored; a report without a turn is charged to the session
    only and counted as unattributed, which degrades only the precision of later decisions.
    """
    if report.report_id in account.reports:
        return account
    session = _charge(account.session, report.amounts, change=False)
    turns, steps = account.turns, account.steps
    unattributed = account.unattributed
    if report.turn_id is None:
        unattributed += 1
    else:
        turns = MappingProxyType(
            {
                **turns,
                report.turn_id: _charge(
                    turns.get(report.turn_id, _NO_LINES), report.amounts, change=False
                ),
            }
        )
        if report.step_id is not None:
            key = (report.turn_id, report.step_id)
            steps = MappingProxyType(
                {**steps, key: _charge(steps.get(key, _NO_LINES), report.amounts, change=False)}
            )
    return SessionAccount(session, turns, steps, account.reports | {report.report_id}, unattributed)


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
