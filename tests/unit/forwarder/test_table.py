"""agents.forwarder.table: states, expiry, supersedes (agent draft 8.1 P8, 9.1, 9.2)."""

from __future__ import annotations

from typing import Any

from agents.forwarder.table import (
    Reach,
    Table,
    accept,
    build,
    effective_expiry,
    rebuild,
    update,
)
from agents.forwarder.values import EntryKey, EntryState, Expiry, Kind
from controller.types import CsId, SessionId
from tests.unit.forwarder.helpers import rule, service, steering

REACH = Reach()
T0 = 1_000_000.0


def _table(services: list[dict[str, Any]], rules: list[dict[str, Any]], now: float = T0) -> Table:
    configured = steering(services, rules)
    return build(configured, accept({}, configured, now), now, REACH)


def _state(table: Table, kind: Kind, name: str) -> EntryState:
    return table.status[EntryKey(kind, name)].state


def test_effective_expiry_is_the_earlier_time() -> None:
    assert effective_expiry(Expiry(None, 10, None), T0) == T0 + 10
    assert effective_expiry(Expiry(T0 - 5, 10, None), T0) == T0 + 5
    assert effective_expiry(Expiry(None, 10, T0 + 3), T0) == T0 + 3
    assert effective_expiry(Expiry(), T0) is None


def test_unchanged_content_keeps_its_acceptance_time() -> None:
    first = steering([service()], [rule("c1")])
    accepted = accept({}, first, T0)
    again = accept(accepted, steering([service()], [rule("c1")]), T0 + 30)
    assert again == accepted  # a repeated instruction does not extend the lifetime
    revised = accept(accepted, steering([service()], [rule("c1", lifetime=90)]), T0 + 30)
    assert revised[EntryKey(Kind.RULE, "c1")].at == T0 + 30
    assert revised[EntryKey(Kind.SERVICE, "ARS")].at == T0


def test_entries_expire_and_are_reported_once() -> None:
    table = _table([service(lifetime=5)], [rule("c1", lifetime=2)])
    assert table.next_due == T0 + 2
    later, expired = rebuild(table, T0 + 2, REACH)
    assert expired == [EntryKey(Kind.RULE, "c1")]
    assert _state(later, Kind.RULE, "c1") is EntryState.EXPIRED
    assert later.rules == {}
    again, none = rebuild(later, T0 + 3, REACH)
    assert none == []
    _, services = rebuild(again, T0 + 5, REACH)
    assert services == [EntryKey(Kind.SERVICE, "ARS")]


def test_a_late_older_rule_is_superseded_from_the_start() -> None:
    table = _table([], [rule("new", supersedes="old"), rule("old", priority=1)])
    status = table.status[EntryKey(Kind.RULE, "old")]
    assert (status.state, status.superseded_by) == (EntryState.SUPERSEDED, "new")
    assert [r.commitment_id for r in table.rules[(CsId("ARS"), SessionId("s1"))]] == ["new"]


def test_an_expired_rule_still_supersedes_a_failed_one_does_not() -> None:
    expired = _table([], [rule("new", supersedes="old", lifetime=1), rule("old")], T0)
    later, _ = rebuild(expired, T0 + 1, REACH)
    assert _state(later, Kind.RULE, "old") is EntryState.SUPERSEDED
    failed = _table([], [rule("new", "sci-name", supersedes="old"), rule("old")])
    assert _state(failed, Kind.RULE, "new") is EntryState.FAILED
    assert _state(failed, Kind.RULE, "old") is EntryState.ACTIVE


def test_entries_this_forwarder_cannot_carry_out_fail_with_a_reason() -> None:
    table = _table(
        [service("X", "10.0.0.1"), service("Y", None, **{"fallback-mode": "network-only"})], []
    )
    assert "not an IP:port locator" in (table.status[EntryKey(Kind.SERVICE, "X")].reason or "")
    assert "no tunnel" in (table.status[EntryKey(Kind.SERVICE, "Y")].reason or "")
    tunnelled = build(table.steering, table.accepted, T0, Reach(None, frozenset({"egress-1"})))
    assert tunnelled.status[EntryKey(Kind.SERVICE, "Y")].state is EntryState.ACTIVE


def test_rules_are_indexed_in_precedence_order() -> None:
    table = _table(
        [],
        [
            rule("loose"),
            rule("specific", match={"session-id": "s1", "step-id": 4}),
            rule("urgent", priority=10),
        ],
    )
    order = [r.commitment_id for r in table.rules[(CsId("ARS"), SessionId("s1"))]]
    assert order == ["urgent", "specific", "loose"]


def test_an_update_gives_what_a_full_build_gives() -> None:
    """Incremental commits (entries named by the edit) agree with rebuilding everything."""
    steps: list[tuple[list[dict[str, Any]], list[dict[str, Any]], list[EntryKey]]] = [
        ([service()], [rule("old")], [EntryKey(Kind.SERVICE, "ARS"), EntryKey(Kind.RULE, "old")]),
        ([service()], [rule("old"), rule("new", supersedes="old")], [EntryKey(Kind.RULE, "new")]),
        ([service(csci_id="10.0.0.9:1")], [rule("old"), rule("new", supersedes="old")],
         [EntryKey(Kind.SERVICE, "ARS")]),
        ([service()], [rule("old")], [EntryKey(Kind.RULE, "new")]),
        ([service()], [rule("old", priority=3, lifetime=1)], [EntryKey(Kind.RULE, "old")]),
    ]  # fmt: skip
    table = _table([], [])
    for number, (services, rules, keys) in enumerate(steps):
        now = T0 + number
        configured = steering(services, rules)
        table = update(table, configured, keys, now, REACH)
        full = build(configured, accept(table.accepted, configured, now), now, REACH, table.status)
        assert table.status == full.status
        assert table.rules == full.rules
        assert table.next_due == full.next_due
        assert table.supersessors == full.supersessors
    later, expired = rebuild(table, T0 + 10, REACH)
    assert expired == [EntryKey(Kind.RULE, "old")]
    full = build(later.steering, later.accepted, T0 + 10, REACH, table.status)
    assert (later.status, later.rules, later.next_due) == (full.status, full.rules, full.next_due)


def test_the_earliest_expiry_follows_updates_of_entries_that_share_it() -> None:
    """next_due is kept from the change alone; ties (entries accepted in one commit) are
    counted, so revising one of several equally early entries keeps the time, and revising
    the last of them finds the next one (what a full build finds)."""
    lifetimes = {"a": 5, "b": 5, "c": 60}
    configured = steering([], [rule(n, lifetime=t) for n, t in lifetimes.items()])
    table = build(configured, accept({}, configured, T0), T0, REACH)
    assert (table.next_due, table.due_ties) == (T0 + 5, 2)
    for number, (name, lifetime) in enumerate((("a", 30), ("b", 20), ("c", 1), ("c", 90))):
        now = T0 + 1 + number
        lifetimes[name] = lifetime
        configured = steering([], [rule(n, lifetime=t) for n, t in lifetimes.items()])
        table = update(table, configured, [EntryKey(Kind.RULE, name)], now, REACH)
        full = build(configured, table.accepted, now, REACH, table.status)
        assert (table.next_due, table.due_ties) == (full.next_due, full.due_ties), name
    assert table.next_due == T0 + 2 + 20  # b, accepted anew at T0 + 2
