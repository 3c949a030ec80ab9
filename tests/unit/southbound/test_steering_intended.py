"""The intended steering state: generations, idempotent rules, retained services (pure)."""

from __future__ import annotations

from controller.selection.joint import FallbackLevel, Outcome, ResultKind
from controller.selection.joint.tracking import TableChanges
from controller.southbound.intended import IntendedState
from controller.southbound.steering import service_entry
from controller.types import CsciId, CsId, ForwarderId

RULE = {
    "commitment-id": "s1/c1",
    "cs-id": "ARS",
    "match": {"session-id": "s1"},
    "csci-id": "127.0.0.1:8801",
    "egress-forwarder": "10.0.0.2",
    "lifetime": 60,
}


def selected(csci: str) -> Outcome:
    return Outcome(
        ResultKind.SELECTED,
        FallbackLevel.NONE,
        (),
        complete=False,
        csci_id=CsciId(csci),
        egress=ForwarderId("10.0.0.2"),
    )


def test_an_identical_rule_changes_nothing_and_a_withdrawal_does() -> None:
    state = IntendedState()
    assert state.intend_rule("a", RULE)
    generation = state.generation("a")
    assert not state.intend_rule("a", dict(RULE))  # repeated instruction: same state
    assert state.generation("a") == generation
    assert state.intend_rule("a", {**RULE, "lifetime": 120})  # a revision
    assert state.counts("a") == (0, 1)
    current, entry = state.entry("a", ("rule", "s1/c1"))
    assert current == state.generation("a")
    assert entry is not None
    assert entry.members["lifetime"] == 120
    assert state.withdraw_rule("a", "s1/c1")
    assert not state.withdraw_rule("a", "s1/c1")
    assert state.snapshot("a") == (generation + 2, {})


def test_services_change_only_when_their_result_does() -> None:
    state = IntendedState()
    ars, vrs = CsId("ARS"), CsId("VRS")
    entry = service_entry(ars, selected("127.0.0.1:1"))
    assert state.set_services("a", {ars: entry, vrs: service_entry(vrs, selected("x:1"))})
    assert not state.set_services("a", {ars: service_entry(ars, selected("127.0.0.1:1"))})
    assert state.set_services("a", {ars: service_entry(ars, selected("127.0.0.1:2"))})
    assert state.set_services("a", {ars: None})  # service unavailable: no entry
    assert state.counts("a") == (1, 0)
    assert state.retain_services("a", [ars])  # VRS no longer handled here
    assert state.counts("a") == (0, 0)
    assert state.counts("other") == (0, 0)


def test_table_changes_concern_their_cs_ids_and_ingresses() -> None:
    changes = TableChanges(frozenset({CsId("ARS")}), frozenset()).merged(
        TableChanges(frozenset(), frozenset({ForwarderId("10.0.0.2")}))
    )
    assert changes.concerns(CsId("ARS"), ForwarderId("10.0.0.1"))
    assert changes.concerns(CsId("VRS"), ForwarderId("10.0.0.2"))
    assert not changes.concerns(CsId("VRS"), ForwarderId("10.0.0.1"))
    assert not TableChanges()
