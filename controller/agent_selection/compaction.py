"""What a decision record keeps of an evaluation (6.5, M39): each eligible candidate's
valuation as its numbers, the parts equal to an earlier record's shared.

A session keeps its records for its life, so a record keeps the numbers :mod:`render` shows
of each candidate rather than the valuations, and shares what is equal across records: the
candidates' results (the state maps they rest on are shared already), the change
assessments and stability checks, and, for a session whose results were kept between its
decisions (:mod:`controller.selection.mapping.memo`), the whole compaction of the last one.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from controller.selection.mapping import CandidateResult, Evaluation
from controller.selection.mapping.findings import QualifiedValue
from controller.selection.mapping.vocabulary import Element, ValueCondition

_T = TypeVar("_T")


#: The numbers a decision record shows of one eligible candidate's valuation (P5, P6), in
#: this order, kept in an ``array('d')`` (NaN: absent; booleans as 0 and 1) instead of the
#: valuation itself: a session keeps its records for its life (M39), and these numbers are
#: all a record needs. Times are seconds.
VALUED = (
    "forwarding",
    "computing",
    "storage",
    "transfer-time",
    "recompute-time",
    "state-cost",
    "state-bytes",
    "suitability",
    "band",
    "tail-ok",
    "tail-verified",
)
_NAN = math.nan


def _number(value: float | None) -> float:
    return _NAN if value is None else float(value)


def valued(result: CandidateResult) -> array[float] | None:
    """The numbers of one candidate's valuation (:data:`VALUED`); None when excluded."""
    scored = result.scored
    if scored is None:
        return None
    v = scored.valuation
    plan = v.measures.storage
    unverified = scored.meets_objective is None and _tail_substituted(v.qualified)
    values = (
        v.forwarding,
        v.computing,
        v.storage,
        plan.transfer_time,
        plan.recompute_time,
        plan.state_cost,
        plan.needed_accelerator_bytes,
        scored.suitability,
        scored.band,
        scored.meets_objective,
        False if unverified else None,
    )
    return array("d", [_number(None if x is None else float(x)) for x in values])


class Interner:
    """Equal parts of the records of one C-PS, kept once: decisions taken on unchanged inputs
    (a session re-evaluated while nothing moved) produce equal exclusions, change
    assessments and stability checks, as the state maps they rest on are shared already.
    Bounded: past ``limit`` entries it starts afresh (what was shared stays shared)."""

    def __init__(self, limit: int = 1 << 16) -> None:
        self._limit = limit
        self._values: dict[object, object] = {}

    def __call__(self, key: object, value: _T) -> _T:
        """The value kept for ``key``, ``value`` when there is none yet."""
        found = self._values.get(key)
        if found is not None:
            return found  # type: ignore[return-value]
        if len(self._values) >= self._limit:
            self._values.clear()
        self._values[key] = value
        return value


def _kept(result: CandidateResult, intern: Interner) -> CandidateResult:
    if result.scored is not None:
        result = replace(result, scored=None)
    key = (id(result.candidate), result.exclusions, result.rank)
    found = intern(key, result)
    return found if found.candidate is result.candidate else result


class Compacted:
    """The latest compaction of one session's results. A decision that took every result
    of the one before (nothing changed: :mod:`controller.selection.mapping.memo`) has the
    very same results, so its record keeps the very same compacted parts."""

    __slots__ = ("kept", "results", "values")

    def __init__(self) -> None:
        self.results: tuple[CandidateResult, ...] | None = None
        self.values: tuple[array[float] | None, ...] = ()
        self.kept: tuple[CandidateResult, ...] = ()


def compact(
    ev: Evaluation, intern: Interner | None = None, last: Compacted | None = None
) -> tuple[Evaluation, tuple[array[float] | None, ...]]:
    """The evaluation as a record keeps it: each candidate's valuation reduced to its
    numbers (:func:`valued`), the parts equal to an earlier record's shared (``intern``),
    those of the session's last decision taken as they are when its results are these
    (``last``)."""
    shared = intern or Interner()
    if last is not None and last.results is ev.results:
        values, results = last.values, last.kept
    else:
        values = tuple(valued(r) for r in ev.results)
        results = tuple(_kept(r, shared) for r in ev.results)
        if last is not None:
            last.results, last.values, last.kept = ev.results, values, results
    change = None if ev.change is None else shared(ev.change, ev.change)
    stability = None if ev.stability is None else shared(ev.stability, ev.stability)
    return replace(ev, results=results, change=change, stability=stability), values


def _tail_substituted(values: Sequence[QualifiedValue]) -> bool:
    return any(
        q.condition in (ValueCondition.MEAN_FOR_TAIL, ValueCondition.UNKNOWN)
        and q.element in (Element.PATH_SET, Element.QUEUE_DELAY, Element.STEP_LATENCY)
        for q in values
    )
