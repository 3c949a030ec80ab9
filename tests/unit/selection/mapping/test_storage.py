"""The storage dimension element by element and the relations of 6.7 (M4, M5, M22-M25, M49)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, ValuesView
from typing import Any

import pytest

from controller.selection.mapping import WorkingSetElement
from controller.selection.mapping.findings import Effect
from controller.selection.mapping.storage import Link, StoragePlan, plan
from controller.selection.mapping.view import ResourceView, StateElementView
from controller.selection.mapping.vocabulary import (
    ElementClass,
    Presence,
    Reason,
    ResidencyTier,
    Role,
    ValueCondition,
)
from controller.selection.mapping.workingset import PreparedWorkingSet
from controller.types import CsciId, ReuseKey, TenantId
from tests.unit.selection.mapping.builders import (
    GB,
    NOW,
    TENANT,
    candidate,
    descriptor,
    element,
    held,
    meta,
    run,
)

EC = ElementClass
LINK = Link(bw=2.5 * GB, rtt=0.008, prefill_rate=1_000.0)
CTX = element("ctx", EC.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000)
DOCS = element("docs", EC.RETRIEVED_MATERIAL, 50e6, 2_000)
TOOL = element("tool", EC.TOOL_RESULT, 1e5, role=Role.CONSTRAINT)
PLAN_STATE = element("plan", EC.PLAN_SCRATCH_STATE, 1e6, 30_000)


def _plan(
    *elements: WorkingSetElement,
    state: Mapping[tuple[TenantId, ReuseKey], StateElementView] | None = None,
    link: Link = LINK,
) -> StoragePlan:
    prepared = PreparedWorkingSet.of(descriptor(working_set=elements))
    view = ResourceView(state=state or {})
    return plan(CsciId("X"), prepared, view, link, NOW)


def test_m49_state_cost_is_the_cheaper_of_transfer_and_recompute() -> None:
    result = _plan(CTX)
    assert result.missing_bytes == int(7.5 * GB)
    assert result.transfer_time == pytest.approx(3.008, abs=1e-12)
    assert result.recompute_time == 128.0
    assert result.state_cost == pytest.approx(3.008, abs=1e-12)
    cheap_rebuild = _plan(CTX, link=Link(bw=0.1 * GB, rtt=0.008, prefill_rate=100_000.0))
    assert cheap_rebuild.transfer_time == pytest.approx(75.008)
    assert cheap_rebuild.state_cost == pytest.approx(1.28)


def test_m4_m23_presence_per_reuse_key_held_in_accelerator_costs_nothing() -> None:
    result = _plan(CTX, DOCS, state=held("ctx", "docs"))
    assert result.held == 2
    assert result.missing_bytes == 0
    assert result.needed_accelerator_bytes == 0
    assert result.state_cost == 0.0


def test_m24_an_element_below_accelerator_memory_costs_its_retrieval_and_still_needs_hbm() -> None:
    result = _plan(CTX, state=held("ctx", residency=ResidencyTier.HOST_MEMORY, retrieval_cost=0.9))
    assert result.retrieval == 0.9
    assert result.state_cost == 0.9
    assert result.needed_accelerator_bytes == int(7.5 * GB)


def test_m5_only_the_missing_part_is_transferred_or_rebuilt() -> None:
    result = _plan(CTX, DOCS, state=held("ctx"))
    assert result.missing_bytes == int(50e6)
    assert result.transfer_time == pytest.approx(50e6 / 2.5e9 + 0.008)
    assert result.recompute_time == 2.0
    assert result.state_cost == pytest.approx(0.028)


def test_m22_a_tool_result_is_never_recomputed_it_must_be_transferred() -> None:
    result = _plan(TOOL, PLAN_STATE)
    assert result.recompute_time == pytest.approx(30.0 + 1.1e6 / 2.5e9 + 0.008 - 1e6 / 2.5e9)
    assert result.transfer_time == pytest.approx(1.1e6 / 2.5e9 + 0.008)
    no_transfer = _plan(TOOL, link=Link(bw=None, rtt=None, prefill_rate=1_000.0))
    assert no_transfer.state_cost is None
    assert [(e.reason, e.reuse_key) for e in no_transfer.exclusions] == [
        (Reason.REQUIRED_TOOL_RESULT_ABSENT, ReuseKey("tool"))
    ]


def test_m22_required_element_absent_when_it_cannot_be_moved_or_rebuilt() -> None:
    required = element("memory", EC.LONG_TERM_MEMORY, 2e5, None, role=Role.CONSTRAINT)
    result = _plan(required, link=Link(bw=None, rtt=None, prefill_rate=1_000.0))
    assert [e.reason for e in result.exclusions] == [Reason.REQUIRED_ELEMENT_ABSENT]


def test_transfer_window_closed_is_the_reason_when_only_a_transfer_could_help() -> None:
    closed = Link(bw=2.5 * GB, rtt=0.008, prefill_rate=1_000.0, transfer_open=False)
    result = _plan(TOOL, link=closed)
    assert [e.reason for e in result.exclusions] == [Reason.TRANSFER_WINDOW_CLOSED]


def test_m28_an_element_that_may_not_move_excludes_every_candidate_not_holding_it() -> None:
    pinned = element("profile", EC.LONG_TERM_MEMORY, 1e4, 100, may_move=False)
    assert [e.reason for e in _plan(pinned).exclusions] == [Reason.ELEMENT_MAY_NOT_MOVE]
    assert _plan(pinned, state=held("profile")).exclusions == ()


def test_m20_unknown_presence_is_not_absent_and_not_present() -> None:
    result = _plan(CTX, state=held("ctx", presence=Presence.UNKNOWN))
    assert result.held == 0
    assert result.state_cost == pytest.approx(3.008)
    assert [(q.condition, q.effect) for q in result.qualified] == [
        (ValueCondition.UNKNOWN, Effect.PREFERENCE_REPORTED)
    ]
    required = element(
        "ctx", EC.MODEL_CONTEXT_STATE, 7.5 * GB, None, role=Role.CONSTRAINT, may_move=True
    )
    offline = Link(bw=None, rtt=None, prefill_rate=None)
    excluded = _plan(required, state=held("ctx", presence=Presence.UNKNOWN), link=offline)
    assert [e.reason for e in excluded.exclusions] == [Reason.VALUE_UNKNOWN]


def test_m25_presence_older_than_the_freshness_need_is_re_verified_not_reused() -> None:
    fresh_need = element("ctx", EC.MODEL_CONTEXT_STATE, 7.5 * GB, 128_000, max_age=60.0)
    after_pause = held("ctx", meta=meta(age=120.0, bound=600.0))
    result = _plan(fresh_need, state=after_pause)
    assert result.held == 0
    assert [q.condition for q in result.qualified] == [ValueCondition.STALE]
    evicted_age = held("ctx", state_age=90.0)
    assert _plan(fresh_need, state=evicted_age).held == 0


def test_section15_reuse_keys_are_scoped_to_their_tenant() -> None:
    other = {(TenantId("tenant-2"), key): view for (_, key), view in held("ctx").items()}
    assert _plan(CTX, state=other).held == 0


def test_m5_an_element_no_candidate_holds_has_no_source_and_can_only_be_recomputed() -> None:
    prepared = PreparedWorkingSet.of(descriptor(working_set=(CTX, TOOL)))
    nowhere = prepared.with_sources(set())
    result = plan(CsciId("X"), nowhere, ResourceView(), LINK, NOW)
    assert result.transfer_time is None
    assert result.recompute_time is None
    assert [e.reason for e in result.exclusions] == [Reason.REQUIRED_TOOL_RESULT_ABSENT]
    tool_held = prepared.with_sources({(TENANT, ReuseKey("tool"))})
    result = plan(CsciId("X"), tool_held, ResourceView(), LINK, NOW)
    assert result.transfer_time == pytest.approx(1e5 / 2.5e9 + 0.008 + 128.0)
    assert result.recompute_time == pytest.approx(128.0 + 1e5 / 2.5e9 + 0.008)
    assert result.exclusions == ()


def test_m20_msg6_unknown_presence_of_a_required_tool_result_excludes_even_if_movable() -> None:
    """The tool result is held at another candidate, so a transfer is possible; this one's
    C-SMA answers unknown: unknown is not absent and cannot satisfy the constraint, so the
    candidate is excluded with the unknown reason, not valued with a hypothetical transfer."""
    prepared = PreparedWorkingSet.of(descriptor(working_set=(TOOL,)))
    sourced = prepared.with_sources({(TENANT, ReuseKey("tool"))})
    unknown = ResourceView(state=held("tool", presence=Presence.UNKNOWN))
    result = plan(CsciId("X"), sourced, unknown, LINK, NOW)
    assert [(e.reason, e.reuse_key, e.observed) for e in result.exclusions] == [
        (Reason.VALUE_UNKNOWN, ReuseKey("tool"), "unknown")
    ]
    absent = ResourceView(state=held("tool", presence=Presence.ABSENT))
    assert plan(CsciId("X"), sourced, absent, LINK, NOW).exclusions == ()  # absent: transfer
    preference = element("tool", EC.TOOL_RESULT, 1e5)  # not required: valued, reported
    loose = PreparedWorkingSet.of(descriptor(working_set=(preference,))).with_sources(
        {(TENANT, ReuseKey("tool"))}
    )
    kept = plan(CsciId("X"), loose, unknown, LINK, NOW)
    assert kept.exclusions == ()
    assert [q.condition for q in kept.qualified] == [ValueCondition.UNKNOWN]


Key = tuple[TenantId, ReuseKey]


class _Counted(Mapping[Key, StateElementView]):
    """A state map that counts how often its copies are walked key by key."""

    def __init__(self, copies: dict[Key, StateElementView]) -> None:
        self._copies = copies
        self.walked = 0
        self.probed = 0

    def get(self, key: Key, default: Any = None) -> Any:
        self.probed += 1
        return self._copies.get(key, default)

    def __getitem__(self, key: Key) -> StateElementView:
        return self._copies[key]

    def __len__(self) -> int:
        return len(self._copies)

    def __iter__(self) -> Iterator[Key]:
        self.walked += 1
        return iter(self._copies)

    def values(self) -> ValuesView[StateElementView]:
        return self._copies.values()


def test_a_candidate_holding_far_more_than_the_step_needs_is_probed_per_element() -> None:
    """A KV cache of thousands of blocks against a step of a few: the working set is probed
    in the state (walking the copies would cost per decision what the cache holds), with the
    same meaning as a walk: present counts, absent is absent, unknown and stale are doubtful."""
    small = held("ctx") | held("docs", presence=Presence.ABSENT)
    small |= held("tool", presence=Presence.UNKNOWN)
    small |= held("plan", meta=meta(age=120.0, bound=30.0))
    steps = (CTX, DOCS, TOOL, PLAN_STATE)
    walked = _plan(*steps, state=small)
    large = _Counted(held(*(f"other-{n}" for n in range(2_000))) | small)
    probed = _plan(*steps, state=large)
    assert large.walked == 0
    assert probed == walked
    assert probed.held == 1
    assert sorted((q.reuse_key, q.condition) for q in probed.qualified) == [
        (ReuseKey("plan"), ValueCondition.STALE),
        (ReuseKey("tool"), ValueCondition.UNKNOWN),
    ]


def test_a_decision_scans_each_candidates_state_once() -> None:
    """Learning which elements some candidate holds (the sources of a transfer) and valuing
    each candidate read the same scan: one probe per element and candidate, not two."""
    steps = (CTX, DOCS, PLAN_STATE)
    states = [
        _Counted(held(*(f"other-{n}" for n in range(500)), *keys))
        for keys in (("ctx", "docs"), ("plan",))
    ]
    evaluation = run(
        descriptor(working_set=steps),
        [candidate(name, state=state) for name, state in zip("AB", states, strict=True)],
    )
    assert [state.probed for state in states] == [len(steps), len(steps)]
    plans = {
        r.csci_id: r.scored.valuation.measures.storage
        for r in evaluation.results
        if r.scored is not None
    }
    assert {csci: p.held for csci, p in plans.items()} == {CsciId("A"): 2, CsciId("B"): 1}
    assert plans[CsciId("B")].missing_bytes == int(7.5 * GB) + int(50e6)  # ctx and docs
