"""Values with metadata and the rules of 7.5 (M20, M33, M34, M41)."""

from __future__ import annotations

import pytest

from controller.selection.mapping import Distribution, Metadata, Quantity, Reading, Unit
from controller.selection.mapping.values import (
    canonical,
    is_mean_for_tail,
    is_stale,
    is_unattributed,
    is_unknown,
    satisfies,
)
from controller.selection.mapping.vocabulary import Confidence, ValueCondition
from controller.types import SourceId
from tests.unit.selection.mapping.builders import NOW, meta

VC = ValueCondition


def test_m20_absent_value_is_unknown_and_satisfies_nothing() -> None:
    reading = Quantity(None, Unit.BYTES, meta()).read(NOW)
    assert reading == Reading(None, VC.UNKNOWN)
    assert reading.usable is False
    assert is_unknown(reading) is True


def test_m20_value_older_than_its_bound_is_stale() -> None:
    assert Quantity(1.0, Unit.SECONDS, meta(age=30.0, bound=30.0)).read(NOW).condition is None
    stale = Quantity(1.0, Unit.SECONDS, meta(age=30.001, bound=30.0)).read(NOW)
    assert stale == Reading(1.0, VC.STALE)
    assert stale.usable is False
    assert is_stale(meta(age=31.0), NOW) is True


def test_m20_freshness_need_of_the_step_tightens_the_bound() -> None:
    quantity = Quantity(1.0, Unit.SECONDS, meta(age=10.0, bound=30.0))
    assert quantity.read(NOW).condition is None
    assert quantity.read(NOW, max_age=5.0).condition is VC.STALE


def test_m20_value_without_source_is_unattributed() -> None:
    reading = Quantity(1.0, Unit.SECONDS, meta(source=None)).read(NOW)
    assert reading.condition is VC.UNATTRIBUTED
    assert reading.usable is False
    assert is_unattributed(meta(source=None)) is True


def test_m41_value_without_collected_at_or_bound_cannot_be_shown_fresh() -> None:
    no_time = Metadata(None, 30.0, SourceId("c-sma-1"))
    no_bound = Metadata(NOW, None, SourceId("c-sma-1"))
    assert no_time.condition(NOW) is VC.STALE
    assert no_bound.condition(NOW) is VC.STALE
    assert no_time.expires_at == float("-inf")


def test_estimate_satisfies_a_constraint_but_is_reported() -> None:
    condition = meta(confidence=Confidence.ESTIMATED).condition(NOW)
    assert condition is VC.ESTIMATED
    assert satisfies(condition) is True
    assert satisfies(VC.STALE) is False


def test_m33_percentile_is_read_at_its_rank_over_its_window() -> None:
    delay = Distribution(((50.0, 0.01), (95.0, 0.04), (99.0, 0.09)), meta(), window=60.0)
    assert delay.at(95.0, 60.0, NOW) == Reading(0.04, None)
    assert delay.at(99.0, 60.0, NOW) == Reading(0.09, None)
    assert delay.at(95.0, 300.0, NOW) == Reading(0.04, VC.UNKNOWN)
    assert delay.at(90.0, 60.0, NOW) == Reading(None, VC.UNKNOWN)


def test_m34_a_mean_is_identified_and_never_stands_in_for_a_percentile() -> None:
    only_mean = Distribution((), meta(), window=60.0, mean=0.02)
    reading = only_mean.at(95.0, 60.0, NOW)
    assert reading == Reading(0.02, VC.MEAN_FOR_TAIL)
    assert reading.usable is False
    assert is_mean_for_tail(reading) is True
    assert is_unknown(reading) is False
    assert only_mean.at(None, None, NOW) == Reading(0.02, None)


def test_m48_units_are_canonical_and_stated() -> None:
    assert canonical(8.0, "ms") == (0.008, Unit.SECONDS)
    assert canonical(7.5, "GB") == (7.5e9, Unit.BYTES)
    assert canonical(2.5, "GB/s") == (2.5e9, Unit.BYTES_PER_SECOND)
    quantity = Quantity.measured(15.23, "GB", meta())
    assert quantity.value == pytest.approx(15.23e9)
    assert quantity.unit is Unit.BYTES
