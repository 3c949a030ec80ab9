"""A session re-evaluated with nothing changed takes its kept P4/P5 results; any change of a
candidate is screened afresh, and the records say what a cold decision would (8.1, M39)."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from controller.agent_selection.candidates import KeptScreenings, StateMap
from controller.model import Schema
from controller.selection.mapping import EvaluationRequest, Policy, SelectionContext, evaluate
from controller.selection.mapping.memo import Screenings
from controller.types import CsciId, SessionId
from tests.unit.agent_selection import drafts
from tests.unit.agent_selection.harness import AS, Harness, harness
from tests.unit.selection.mapping.builders import NOW, TIERS, candidate, descriptor

TURN = f"{AS}:t2-turn-start"


def _specs() -> list[drafts.Spec]:
    """40 candidates (more than a session's results are kept from), some holding state,
    one in ten of a tier too small."""
    return [
        drafts.Spec(
            f"c{i}",
            tier="small" if i % 10 == 3 else "capable",
            delay=0.010 + i / 1000,
            wait=0.05 + (i % 7) / 100,
            holds=("kv", "docs") if i % 4 == 0 else ("docs",) if i % 4 == 1 else (),
        )
        for i in range(40)
    ]


def _decided(h: Harness, session: str) -> list[dict[str, Any]]:
    """The session's decision records, without what differs between two decisions anyway."""
    records = h.session(session)["decision-record"]
    keep = ("candidate", "eligible", "exclusion", "selected", "qualified-value")
    return [{name: r.get(name) for name in keep} for r in records]


def test_p4_p5_a_re_evaluation_with_nothing_changed_takes_the_kept_results(
    schema: Schema,
) -> None:
    specs = _specs()
    h = harness(schema, specs)
    h.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-1")})
    decisions = h.service._decisions
    h.call("evaluate", {"session-id": "s-1", "trigger": TURN})
    kept = decisions.screenings.of(SessionId("s-1"), len(specs))
    assert kept is not None
    hits = kept.hits
    h.clock.now += 1.0
    h.call("evaluate", {"session-id": "s-1", "trigger": TURN})
    assert kept.hits - hits == len(specs)  # every candidate, the stateless ones too
    first, second = _decided(h, "s-1")[-2:]
    assert first == second
    assert "c3" not in (second["eligible"] or [])  # the reasons are kept: c3's tier
    assert any(e["csci-id"] == "c3" for e in second["exclusion"])


def test_p4_p5_a_candidate_whose_state_changed_is_screened_afresh_as_a_cold_decision_would(
    schema: Schema,
) -> None:
    specs = _specs()
    h = harness(schema, specs)
    h.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-1")})
    for _ in range(2):
        h.call("evaluate", {"session-id": "s-1", "trigger": TURN})
        h.clock.now += 1.0
    h.csma.hold("c2", drafts.TENANT, "kv")  # c2 now holds the context state too
    h.call("evaluate", {"session-id": "s-1", "trigger": TURN})
    warm = _decided(h, "s-1")[-1]
    cold = harness(schema, specs)
    cold.clock.now = h.clock.now
    cold.csma.hold("c2", drafts.TENANT, "kv")
    cold.call("submit-descriptor", {"descriptor": drafts.descriptor_84("s-1")})
    cold.call("evaluate", {"session-id": "s-1", "trigger": TURN})
    assert warm == _decided(cold, "s-1")[-1]
    before = {c["csci-id"]: c for c in _decided(h, "s-1")[-2]["candidate"]}
    after = {c["csci-id"]: c for c in warm["candidate"]}
    assert before["c2"] != after["c2"]  # its storage valuation moved
    assert {k: v for k, v in before.items() if k != "c2"} == {
        k: v for k, v in after.items() if k != "c2"
    }


def _fill(kept: Screenings | None, count: int) -> None:
    """Decide once over ``count`` candidates with ``kept``."""
    assert kept is not None
    candidates = [candidate(f"c{i}") for i in range(count)]
    policy = Policy(SelectionContext(), TIERS)
    evaluate(EvaluationRequest(descriptor()), candidates, policy, NOW, kept)
    assert len(kept) == count


def test_kept_results_are_bounded_over_sessions_and_go_with_a_closed_session() -> None:
    store = KeptScreenings(limit=100)
    first, second, third = SessionId("s-1"), SessionId("s-2"), SessionId("s-3")
    assert store.of(first, 5) is None  # few candidates: nothing kept
    for session in (first, second):
        _fill(store.of(session, 40), 40)
        store.sized(session)
    assert len(store) == 2
    _fill(store.of(third, 40), 40)
    store.sized(third)  # 120 results > 100: the least recently decided goes
    assert len(store) == 2
    assert store.compacted(first) is None
    assert store.compacted(second) is not None
    store.forget(second)
    assert (len(store), store.compacted(second)) == (1, None)


def test_p3_a_candidate_without_state_keeps_its_value_so_its_results_are_kept(
    schema: Schema,
) -> None:
    """The presence cache leaves absent elements out, so a candidate holding nothing has an
    empty state map: the same map must give the same candidate (it was built anew)."""
    h = harness(schema, _specs())
    decisions = h.service._decisions
    config = decisions.config()
    service = config.candidates[next(iter(config.candidates))].cs_id
    empty: dict[CsciId, StateMap] = {c: MappingProxyType({}) for c in config.candidates}
    first = decisions.book.candidates(config, service, empty)
    again = decisions.book.candidates(config, service, empty)
    assert len(first) == 40
    assert all(a is b for a, b in zip(first, again, strict=True))
    slower = [replace(spec, delay=0.3) if spec.csci_id == "c0" else spec for spec in _specs()]
    h.call("advertise-forwarding-view", drafts.forwarding(slower, h.clock.now + 1, 2))
    after = decisions.book.candidates(config, service, empty)
    delay = after[0].view.paths[0].delay
    assert delay is not None
    assert delay.ranks[95.0] == 0.3  # the new advertisement is seen, not the last list
