"""Dispatch accounting (update-control/dispatch-accounting): the ledger, the virtual queue,
and the accounted CST entry and resource view."""

from __future__ import annotations

import math

import pytest

from controller.selection.dispatch import Dispatch, DispatchAccounting, Ledger, backlog
from controller.selection.joint import CstEntry, Metric
from controller.selection.joint.accounted import accounted_entry
from controller.selection.mapping import Distribution, Metadata, ResourceView, StateElementView
from controller.selection.mapping.accounted import accounted_view
from controller.selection.mapping.vocabulary import Confidence, Presence, ResidencyTier
from controller.selection.units import Micros
from controller.types import CsciId, CsId, ReuseKey, SourceId, TenantId

ON = DispatchAccounting(enabled=True)
A = CsciId("a")
KEY = (TenantId("t"), ReuseKey("k1"))


def test_the_virtual_queue_drains_one_second_per_second() -> None:
    dispatches = [Dispatch(1.0, 2.0), Dispatch(2.0, 1.0)]
    # reported 1 s at 0; drained to 0 by 1 s; +2 -> 2; 1 s later 1 left, +1 -> 2; at 3 s: 1
    assert backlog(1.0, 0.0, dispatches, 3.0, ON) == pytest.approx(1.0)
    assert backlog(1.0, 0.0, dispatches, 10.0, ON) == 0.0
    assert backlog(0.5, 0.0, [], 0.2, ON) == pytest.approx(0.3)


def test_a_selection_without_an_estimate_takes_the_configured_work() -> None:
    settings = DispatchAccounting(enabled=True, computing_time_per_selection=Micros(250_000))
    assert backlog(0.0, 0.0, [Dispatch(1.0), Dispatch(1.0)], 1.0, settings) == pytest.approx(0.5)
    assert backlog(0.0, 0.0, [Dispatch(1.0)], 1.0, ON) == 0.0


def test_the_ledger_forgets_what_a_later_report_reflects() -> None:
    ledger = Ledger().record(A, Dispatch(1.0, done=5.0)).record(A, Dispatch(3.0, done=4.0))
    assert [d.at for d in ledger.since(A, 2.0)] == [3.0]  # load: arrived after the report
    assert [d.at for d in ledger.holding(A, 4.5)] == [1.0]  # state: work not yet done
    assert ledger.pruned(A, 5.0).pending == {}
    assert ledger.pruned(A, 0.5) is ledger


def _entry() -> CstEntry:
    return CstEntry(CsId("s"), A, 100, Micros(5000), 10.0, 100.0)


def test_an_entry_counts_the_selections_since_its_report() -> None:
    settings = DispatchAccounting(enabled=True, gas_per_selection=2)
    counted = accounted_entry(
        _entry(), [Dispatch(10.5, 0.25), Dispatch(10.5, 0.25)], 10.5, settings
    )
    assert counted.gas == 96
    assert counted.computing_time == 5000 + 500_000
    assert Metric.COMPUTING_TIME in counted.estimated
    assert accounted_entry(_entry(), [Dispatch(10.5, 0.25)], 10.5, DispatchAccounting()) == _entry()


def _view() -> ResourceView:
    meta = Metadata(10.0, 30.0, SourceId("c-sma"))
    held = StateElementView(Presence.PRESENT, meta, ResidencyTier.ACCELERATOR_MEMORY)
    return ResourceView(
        queue_delay=Distribution(((50.0, 1.0), (95.0, 2.0)), meta),
        state={(TenantId("t"), ReuseKey("k0")): held},
    )


def test_a_view_counts_the_queued_work_and_holds_the_elements_left_behind() -> None:
    queued = [Dispatch(11.0, 0.5, frozenset({KEY}), done=13.0)]
    view = accounted_view(_view(), queued, queued, 12.0, ON)
    assert view.queue_delay is not None
    # 1 s drained to 0 by 11 s, then +0.5, drained 1 s more: 0; p95: 2 -> 1 -> 1.5 -> 0.5
    assert dict(view.queue_delay.percentiles) == {50.0: 0.0, 95.0: pytest.approx(0.5)}
    assert view.queue_delay.meta.confidence is Confidence.ESTIMATED
    assert view.state[KEY].presence is Presence.PRESENT
    assert view.state[KEY].meta.confidence is Confidence.ESTIMATED
    assert len(view.state) == 2
    assert set(view.state) == {KEY, (TenantId("t"), ReuseKey("k0"))}
    assert view.state.get((TenantId("t"), ReuseKey("k9"))) is None
    assert view.fresh_until == -math.inf  # estimates: every value is checked, and reported


def test_nothing_changes_when_accounting_is_off_or_nothing_is_pending() -> None:
    view = _view()
    assert accounted_view(view, [Dispatch(11.0, 0.5)], [], 12.0, DispatchAccounting()) is view
    assert accounted_view(view, [], [], 12.0, ON) is view


def test_a_selection_reflected_before_the_report_never_grows_the_queue_backwards() -> None:
    # A dispatch that arrived before the report counts from the report on, in full.
    assert backlog(1.0, 5.0, [Dispatch(4.0, 0.5)], 5.0, ON) == pytest.approx(1.5)
    assert backlog(1.0, 5.0, [Dispatch(4.0, 0.5)], 6.0, ON) == pytest.approx(0.5)
