"""P4 and P5 of unchanged candidates, kept between the decisions of one session (8.1, M39).

A re-evaluation with nothing changed (a turn starts, the working set and the views are the
same) screens and values every candidate exactly as the decision before did. What P4 and P5
read of one candidate is its view, the prepared descriptor (:class:`Prepared`: the
descriptor, the catalogue, the context, the position and which elements some candidate
holds) and the time, and the time only through comparisons with a few instants of the view:
the expiry of each value's freshness bound (also cut by the step's and each element's
freshness need), the edges of the transfer window, when the view stops being wholly fresh.
Between two consecutive such instants every comparison comes out the same, so P4 and P5 do.

:class:`Screenings` keeps, per candidate, the result with the open interval of time around
the instant it was computed at in which no such instant lies; a later decision reuses it
only for the very same candidate value (identity: candidates are frozen values, and the C-PS
hands the same value again while nothing of it changed), the same prepared descriptor
(equality) and a time inside the interval, kept :data:`MARGIN` away from both ends so that
rounding (``now - collected_at > bound`` against ``collected_at + bound``) cannot matter.
Anything else is screened afresh. Pure: time is passed in; the container is the caller's.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from controller.selection.mapping.combination import Scored
from controller.selection.mapping.findings import Exclusion, QualifiedValue
from controller.selection.mapping.prepared import Prepared
from controller.selection.mapping.record import CandidateResult
from controller.selection.mapping.valuation import Valuation
from controller.selection.mapping.values import Metadata
from controller.selection.mapping.view import Candidate, ResourceView, group_metas
from controller.selection.units import Timestamp
from controller.types import CsciId

MARGIN = 1e-3
"""Seconds kept between a reused result's time and any instant its comparisons switch at."""


@dataclass(frozen=True, slots=True)
class Combined:
    """P6 of one decision and the per-candidate results it gave (MSG-9)."""

    ranked: tuple[Scored, ...]
    by_id: Mapping[CsciId, tuple[int, Scored]]
    results: tuple[CandidateResult, ...]
    qualified: tuple[QualifiedValue, ...]


@dataclass(frozen=True, slots=True)
class Entry:
    """One candidate's P4 and P5: its exclusions, and its valuation when it is eligible."""

    candidate: Candidate
    exclusions: tuple[Exclusion, ...]
    valuation: Valuation | None
    after: float  # valid for times strictly between these two, MARGIN inside
    before: float


def _meta_instants(meta: Metadata, ages: tuple[float, ...]) -> Iterator[float]:
    """When a value under ``meta`` goes stale, at its own bound and at each freshness need."""
    collected = meta.collected_at
    if collected is None or meta.freshness_bound is None:
        return  # stale at any time
    yield collected + meta.freshness_bound
    for age in ages:
        yield collected + age


def instants(view: ResourceView, ages: tuple[float, ...]) -> Iterator[float]:
    """Every instant at which a comparison of P4 or P5 with the time can switch for ``view``
    (``ages``: the step's and the elements' freshness needs)."""
    yield view.fresh_until
    yield view.state_fresh_until
    for age in ages:
        yield view.oldest + age
    for meta in group_metas(view):
        yield from _meta_instants(meta, ages)
    window = view.transfer_window
    if window is not None:
        for edge in (window.start_not_before, window.start_not_after):
            if edge is not None:
                yield edge
    for _, seen in view.reported:
        yield from _meta_instants(seen.meta, ages)


def ages(prepared: Prepared) -> tuple[float, ...]:
    """The freshness needs a decision compares ages with (the step's, each element's)."""
    found = {e.max_age for e in prepared.working_set.elements.values() if e.max_age is not None}
    if prepared.max_age is not None:
        found.add(prepared.max_age)
    return tuple(sorted(found))


def _margin(now: Timestamp) -> float:
    return max(MARGIN, abs(now) * 1e-12)


def interval(view: ResourceView, needs: tuple[float, ...], now: Timestamp) -> tuple[float, float]:
    """The open interval around ``now`` in which no instant of ``view`` lies, shrunk by the
    margin at both ends; empty (after >= before) when ``now`` is too close to one."""
    after, before = -math.inf, math.inf
    for instant in instants(view, needs):
        if instant <= now:
            after = max(after, instant)
        else:
            before = min(before, instant)
    margin = _margin(now)
    return after + margin, before - margin


class Screenings:
    """The P4/P5 results of one session's last prepared descriptor, per candidate, and what
    P6 made of them; the caller keeps it (one per session) and passes it to every
    evaluation of the session.

    P6 (combination and rank) and the per-candidate results depend on the candidates in
    order, their P4/P5 results, the prepared descriptor (context, current instance) and the
    source discounts only: when every candidate of a decision took its kept result, in the
    same order, under equal discounts, the kept P6 is taken as well.
    """

    __slots__ = (
        "_ages",
        "_candidates",
        "_combined",
        "_entries",
        "_prepared",
        "_unchanged",
        "hits",
        "misses",
    )

    def __init__(self) -> None:
        self._prepared: Prepared | None = None
        self._ages: tuple[float, ...] = ()
        self._entries: dict[CsciId, Entry] = {}
        self._candidates: Sequence[Candidate] = ()
        self._unchanged = False
        self._combined: tuple[Mapping[CsciId, float], Combined] | None = None
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def start(self, prepared: Prepared, candidates: Sequence[Candidate]) -> None:
        """A decision on ``prepared`` over ``candidates``: what was kept for another prepared
        descriptor goes."""
        if self._prepared is None or self._prepared != prepared:
            self._entries = {}
            self._combined = None
            self._prepared = prepared
            self._ages = ages(prepared)
        same = len(candidates) == len(self._candidates) and all(
            map(operator.is_, candidates, self._candidates)
        )
        self._unchanged = same and self._combined is not None
        self._candidates = tuple(candidates)

    def combined(self, discounts: Mapping[CsciId, float]) -> Combined | None:
        """What :meth:`keep_combined` kept, when this decision's P4/P5 results are all the kept
        ones (no candidate screened afresh), in the same order, and the discounts are equal."""
        if not self._unchanged or self._combined is None:
            return None
        kept_discounts, found = self._combined
        return found if kept_discounts == discounts else None

    def keep_combined(self, discounts: Mapping[CsciId, float], found: Combined) -> None:
        """Keep P6 and the results of this decision for the next one."""
        self._combined = (dict(discounts), found)

    def forget_combined(self) -> None:
        """This decision's P6 is not the one of the kept results (a fallback degraded it)."""
        self._combined = None

    def get(self, candidate: Candidate, now: Timestamp) -> Entry | None:
        """The kept result of ``candidate`` when it holds at ``now``."""
        found = self._entries.get(candidate.csci_id)
        if found is not None and found.candidate is candidate and found.after < now < found.before:
            self.hits += 1
            return found
        self.misses += 1
        self._unchanged = False
        return None

    def keep(
        self,
        candidate: Candidate,
        exclusions: tuple[Exclusion, ...],
        valuation: Valuation | None,
        now: Timestamp,
    ) -> None:
        """Keep a result computed at ``now`` (not when ``now`` is too near a switch)."""
        after, before = interval(candidate.view, self._ages, now)
        if after < now < before:
            self._entries[candidate.csci_id] = Entry(
                candidate, exclusions, valuation, after, before
            )
        else:
            self._entries.pop(candidate.csci_id, None)
