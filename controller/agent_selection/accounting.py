"""P11 on the wire: MSG-15 reports charged to the session, DP9 thresholds, reserves (7.3, M38).

A report is charged once (its report-id), to the session, its turn and its step (M13);
consumption is monotone. Each budget threshold of the pacing policy is notified once when the
consumed share reaches it; a ``refuse`` threshold, or a next step the ceiling cannot pay
for, refuses the session's further steps (DP9).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from controller.agent_selection.decide import note
from controller.agent_selection.sessions import Session
from controller.agent_selection.state import amount
from controller.agent_selection.values import ident, number, qualified
from controller.selection.mapping import (
    BudgetPacing,
    Consumption,
    Pace,
    SessionAccount,
    budget_decision,
    charge,
    reserve,
)
from controller.selection.mapping.vocabulary import BudgetDimension, Scope
from controller.types import Json


def consumption(members: Mapping[str, Any]) -> Consumption:
    """The Consumption of an accounting-feedback (time from milliseconds to seconds), with
    the scope it totals (MSG-15: a step, or the end of a turn)."""
    attribution = members["attribution"]
    amounts: dict[BudgetDimension, float] = {}
    for entry in members.get("consumption", ()):
        dimension = BudgetDimension(ident(entry["dimension"]))
        value = number(entry["amount"]) or 0.0
        amounts[dimension] = value / 1000.0 if dimension is BudgetDimension.TIME else value
    turn, step = attribution.get("turn-id"), attribution.get("step-id")
    return Consumption(
        str(members["report-id"]),
        amounts,
        None if turn is None else int(turn),
        None if step is None else int(step),
        Scope(str(members.get("scope", Scope.STEP.value))),
    )


def _steps_run(account: SessionAccount) -> int:
    return max(len(account.steps), 1)


def charged(
    session: Session, members: Mapping[str, Any], pacing: BudgetPacing
) -> tuple[Session, list[Json]]:
    """The session after one report, with the budget-threshold notifications it causes."""
    report = consumption(members)
    account = charge(session.account, report)
    if account is session.account:
        return session, []  # a repeated report is charged once (7.5)
    notes: list[Json] = []
    notified = set(session.notified)
    refused = session.refused
    remaining_steps = session.descriptor.remaining_horizon or 1
    for dimension, line in account.session.items():
        if not line.limit:
            continue
        share = line.consumed / line.limit
        for fraction, action in pacing.thresholds:
            key = (dimension.value, fraction)
            if share >= fraction and key not in notified:
                notified.add(key)
                notes.append(_threshold(session, line, dimension, fraction, action.value))
        expected = line.consumed / _steps_run(account)
        if budget_decision(line, pacing, expected, remaining_steps) is Pace.REFUSE:
            refused = True
    updated = replace(session, account=account, notified=frozenset(notified), refused=refused)
    return updated, notes


def _threshold(
    session: Session, line: Any, dimension: BudgetDimension, fraction: float, action: str
) -> Json:
    members: Json = {
        "session-id": session.session_id,
        "scope": "session",
        "dimension": qualified(dimension.value),
        "threshold": f"{fraction:.4f}",
        "limit": amount(dimension, line.limit),
        "consumed": amount(dimension, line.consumed),
        "remaining": amount(dimension, max(line.remaining or 0.0, 0.0)),
        "action": action,
    }
    if session.turn is not None:
        members["turn-id"] = session.turn
    if session.step is not None:
        members["step-id"] = session.step
    return note("budget-threshold", members)


def reserves(account: SessionAccount, pacing: BudgetPacing) -> dict[BudgetDimension, float]:
    """The reserve held back for the remaining steps, per session line (M38)."""
    return {d: reserve(line, pacing) for d, line in account.session.items() if line.limit}
