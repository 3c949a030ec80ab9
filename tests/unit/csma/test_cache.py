"""agents.csma.cache: sequence numbers per SCI, retransmissions, ownership and expiry."""

from __future__ import annotations

import pytest

from agents.csma.cache import (
    Arrival,
    Outcome,
    OwnedError,
    RegressedError,
    SiteCache,
    accept,
    forget,
    live,
)
from agents.csma.values import Health
from tests.unit.csma.values import key, metrics


def test_a_higher_sequence_number_applies_and_a_lower_one_is_refused() -> None:
    cache, outcome = accept(SiteCache(), Arrival(metrics("a", 10), 5, "sci-a"), 0.0, 6.0)
    assert outcome is Outcome.APPLIED
    cache, outcome = accept(cache, Arrival(metrics("a", 20), 6, "sci-a"), 1.0, 6.0)
    assert outcome is Outcome.APPLIED
    assert live(cache, 1.0)[key("a")].gas == 20
    with pytest.raises(RegressedError, match="below the last accepted 6"):
        accept(cache, Arrival(metrics("a", 30), 4, "sci-a"), 2.0, 6.0)


def test_the_same_sequence_number_is_a_retransmission_not_applied_twice() -> None:
    cache, _ = accept(SiteCache(), Arrival(metrics("a", 10), 5, "sci-a"), 0.0, 6.0)
    again, outcome = accept(cache, Arrival(metrics("a", 99), 5, "sci-a"), 1.0, 6.0)
    assert outcome is Outcome.RETRANSMISSION
    assert again is cache


def test_another_user_may_not_report_for_a_live_sci_but_may_after_it_aged_out() -> None:
    cache, _ = accept(SiteCache(), Arrival(metrics("a", 10), 5, "sci-a"), 0.0, 6.0)
    with pytest.raises(OwnedError):
        accept(cache, Arrival(metrics("a", 10), 9, "intruder"), 1.0, 6.0)
    taken, outcome = accept(cache, Arrival(metrics("a", 7), 1, "sci-a2"), 7.0, 6.0)
    assert outcome is Outcome.APPLIED
    assert taken.reports[key("a")].reporter == "sci-a2"


def test_a_silent_sci_is_withdrawn_after_its_lifetime_then_forgotten() -> None:
    cache, _ = accept(SiteCache(), Arrival(metrics("a", 10), 5, "sci-a"), 0.0, 6.0)
    assert live(cache, 5.9)[key("a")].gas == 10
    withdrawn = live(cache, 6.0)[key("a")]
    assert (withdrawn.gas, withdrawn.health) == (0, Health.UNKNOWN)
    assert forget(cache, 60.0, 60.0) is cache
    assert forget(cache, 66.0, 60.0).reports == {}


def test_a_report_without_computing_time_keeps_the_last_estimate() -> None:
    cache, _ = accept(SiteCache(), Arrival(metrics("a", 10, "21.5"), 5, "sci-a"), 0.0, 6.0)
    cache, _ = accept(cache, Arrival(metrics("a", 12, None), 6, "sci-a"), 1.0, 6.0)
    kept = live(cache, 1.0)[key("a")]
    assert (kept.gas, str(kept.computing_time)) == (12, "21.5")
