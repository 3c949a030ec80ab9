"""Values with their metadata, and the rules that decide whether a value may be used (7.4, 7.5).

Every quantity carries the time it was observed, its freshness bound, its source, its unit and,
for a distribution, whether a statistic is a percentile (rank over a window) or a mean. A value
that is absent, stale or unattributed is unknown and never satisfies a constraint (M20); a mean
never satisfies a constraint stated at a percentile (M34). Time is seconds on the caller's clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

from controller.selection.mapping.vocabulary import Confidence, ValueCondition
from controller.selection.units import Timestamp
from controller.types import SourceId


class Unit(StrEnum):
    """The canonical units of the mapping core; YANG milliseconds and MB/s convert at the edge."""

    SECONDS = "s"
    BYTES = "bytes"
    TOKENS = "tokens"
    BYTES_PER_SECOND = "bytes/s"
    TOKENS_PER_SECOND = "tokens/s"
    FRACTION = "fraction"
    COST = "cost"
    JOULES = "J"


_SCALE: dict[str, tuple[Unit, float]] = {
    "ms": (Unit.SECONDS, 1e-3),
    "GB": (Unit.BYTES, 1e9),
    "GiB": (Unit.BYTES, 2.0**30),
    "MiB": (Unit.BYTES, 2.0**20),
    "MB/s": (Unit.BYTES_PER_SECOND, 1e6),
    "GB/s": (Unit.BYTES_PER_SECOND, 1e9),
}


def canonical(value: float, unit: str) -> tuple[float, Unit]:
    """``value`` in ``unit`` (a canonical unit or ms, GB, GiB, MiB, MB/s, GB/s), canonicalized."""
    if unit in _SCALE:
        base, factor = _SCALE[unit]
        return value * factor, base
    return value, Unit(unit)


@dataclass(frozen=True, slots=True)
class Metadata:
    """collected-at, freshness-bound, source and confidence (7.4); shared by values observed
    together, as the YANG entry groups them."""

    collected_at: Timestamp | None
    freshness_bound: float | None
    source: SourceId | None
    confidence: Confidence = Confidence.ASSERTED

    def condition(self, now: Timestamp, max_age: float | None = None) -> ValueCondition | None:
        """Why a value under this metadata may not satisfy a constraint, or None (7.5, M20).

        A value whose time or bound is missing cannot be shown fresh and is stale; the
        freshness need of the step (``max_age``) tightens the bound. An estimate is reported
        but is not disqualified (qualified-value 'constraint-satisfied-on-estimate').
        """
        if self.collected_at is None or self.freshness_bound is None:
            return ValueCondition.STALE
        bound = self.freshness_bound if max_age is None else min(self.freshness_bound, max_age)
        if now - self.collected_at > bound:
            return ValueCondition.STALE
        if self.source is None:
            return ValueCondition.UNATTRIBUTED
        if self.confidence is Confidence.ESTIMATED:
            return ValueCondition.ESTIMATED
        return None

    @property
    def expires_at(self) -> float:
        """The time after which the value is stale; -inf when it cannot be shown fresh."""
        if self.collected_at is None or self.freshness_bound is None:
            return -math.inf
        return self.collected_at + self.freshness_bound

    @property
    def clean(self) -> bool:
        """Attributed and asserted or derived: nothing to report while fresh."""
        return self.source is not None and self.confidence is not Confidence.ESTIMATED


def satisfies(condition: ValueCondition | None) -> bool:
    """Whether a value in this condition may satisfy a constraint (M20, M34)."""
    return condition is None or condition is ValueCondition.ESTIMATED


def is_stale(meta: Metadata, now: Timestamp) -> bool:
    """The age exceeds the freshness bound, or cannot be shown within it (7.5)."""
    return meta.condition(now) is ValueCondition.STALE


def is_unattributed(meta: Metadata) -> bool:
    """No source asserted the value: its provenance is unknown (M20)."""
    return meta.source is None


class Reading(NamedTuple):
    """A value as read for one use: the number (None when unknown) and its condition."""

    value: float | None
    condition: ValueCondition | None

    @property
    def usable(self) -> bool:
        """The reading may satisfy a constraint."""
        return self.value is not None and satisfies(self.condition)


UNKNOWN = Reading(None, ValueCondition.UNKNOWN)


def is_unknown(reading: Reading) -> bool:
    """The value is absent or was reported as unknown (7.5)."""
    return reading.value is None or reading.condition is ValueCondition.UNKNOWN


def is_mean_for_tail(reading: Reading) -> bool:
    """Only a mean stood where a percentile was asked for (M34)."""
    return reading.condition is ValueCondition.MEAN_FOR_TAIL


@dataclass(frozen=True, slots=True)
class Quantity:
    """One scalar value in a canonical unit with its metadata (7.4, M41, M48)."""

    value: float | None
    unit: Unit
    meta: Metadata

    @classmethod
    def measured(cls, value: float | None, unit: str, meta: Metadata) -> Quantity:
        """A value given in any unit :func:`canonical` knows."""
        if value is None:
            return cls(None, canonical(0.0, unit)[1], meta)
        scaled, base = canonical(value, unit)
        return cls(scaled, base, meta)

    def read(self, now: Timestamp, max_age: float | None = None) -> Reading:
        """The value with the condition that qualifies it (unknown first, then metadata)."""
        if self.value is None:
            return UNKNOWN
        return Reading(self.value, self.meta.condition(now, max_age))


def read(value: float | None, meta: Metadata | None, now: Timestamp) -> Reading:
    """A field of a group observed together: unknown when the value or the group is absent."""
    if value is None or meta is None:
        return UNKNOWN
    return Reading(value, meta.condition(now))


@dataclass(frozen=True, slots=True)
class Distribution:
    """A duration observed as a distribution over a window (latency-distribution, class QUANTILE).

    ``percentiles`` maps a rank (50 for the median, 95 for p95) to seconds; ``mean`` is
    identified as a mean and never stands in for a percentile (7.5, M33, M34).
    """

    percentiles: tuple[tuple[float, float], ...]
    meta: Metadata
    window: float | None = None
    mean: float | None = None
    sample_count: int | None = None
    unit: Unit = Unit.SECONDS
    ranks: dict[float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Index the percentiles once per observation."""
        object.__setattr__(self, "ranks", dict(self.percentiles))

    def at(
        self,
        rank: float | None,
        window: float | None,
        now: Timestamp,
        *,
        fresh: bool = False,
        max_age: float | None = None,
    ) -> Reading:
        """The value at ``rank`` over ``window`` (rank None: the mean is asked for).

        A percentile over another window, or without a window, is not the stated percentile
        and is unknown. Where only the mean exists it is returned as ``mean-for-tail``: usable
        in a preference and reported, never satisfying a constraint. ``fresh`` says the caller
        has already shown the metadata fresh and clean; ``max_age`` is the step's freshness need.
        """
        meta_condition = None if fresh else self.meta.condition(now, max_age)
        if rank is None:
            if self.mean is None:
                return UNKNOWN
            return Reading(self.mean, meta_condition)
        value = self.ranks.get(rank)
        if value is not None:
            if window is not None and self.window != window:
                return Reading(value, ValueCondition.UNKNOWN)
            return Reading(value, meta_condition)
        if self.mean is not None:
            return Reading(self.mean, ValueCondition.MEAN_FOR_TAIL)
        return UNKNOWN
