"""What P4 and P5 find about a candidate: exclusions and qualified values (8.1, 7.5, M18, M50).

Exclusions are the outcome of constraints only; qualified values record a value that was
unknown, stale, unattributed, a mean or an estimate, and whether a constraint or a preference
used it. They mirror the ``exclusion`` and ``qualified-value`` groupings of the YANG module.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from controller.selection.mapping.vocabulary import (
    CONDITION_REASON,
    Element,
    Reason,
    Role,
    ValueCondition,
)
from controller.types import CsciId, ReuseKey


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A candidate excluded by a constraint: the reason code and the comparison (M19, M50)."""

    csci_id: CsciId
    reason: Reason
    constraint: Element
    comparison: str = ""
    required: str = ""
    observed: str = ""
    reuse_key: ReuseKey | None = None
    detail: str = ""


class Effect(StrEnum):
    """qualified-value effect: what the decision did with the value (7.5)."""

    CONSTRAINT_NOT_SATISFIED = "constraint-not-satisfied"
    CONSTRAINT_SATISFIED_ON_ESTIMATE = "constraint-satisfied-on-estimate"
    PREFERENCE_REPORTED = "preference-reported"


@dataclass(frozen=True, slots=True)
class QualifiedValue:
    """A value used by a decision that was not a clean fresh attributed assertion (7.5, M20)."""

    element: Element
    condition: ValueCondition
    used_in: Role
    effect: Effect
    csci_id: CsciId | None = None
    reuse_key: ReuseKey | None = None


def unusable(
    csci_id: CsciId,
    constraint: Element,
    condition: ValueCondition,
    relation: tuple[str, str],
    reuse_key: ReuseKey | None = None,
) -> Exclusion:
    """The exclusion of a constraint that rested on an unusable value (M20, M34).

    ``relation`` is the comparison evaluated and the value it required.
    """
    comparison, required = relation
    return Exclusion(
        csci_id,
        CONDITION_REASON[condition],
        constraint,
        comparison,
        required,
        observed=condition.value,
        reuse_key=reuse_key,
        detail=f"{constraint.value} in force, value {condition.value}: not satisfied",
    )


def reported(
    csci_id: CsciId,
    element: Element,
    condition: ValueCondition,
    reuse_key: ReuseKey | None = None,
) -> QualifiedValue:
    """A qualified value used in a preference, reported in the record (7.5)."""
    return QualifiedValue(
        element, condition, Role.PREFERENCE, Effect.PREFERENCE_REPORTED, csci_id, reuse_key
    )


def on_estimate(csci_id: CsciId, element: Element) -> QualifiedValue:
    """A fresh attributed estimate that satisfied a constraint, reported (7.4 confidence)."""
    return QualifiedValue(
        element,
        ValueCondition.ESTIMATED,
        Role.CONSTRAINT,
        Effect.CONSTRAINT_SATISFIED_ON_ESTIMATE,
        csci_id,
    )
