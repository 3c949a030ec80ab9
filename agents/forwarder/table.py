"""The forwarding table: the state of each configured entry at a time (pure).

An entry is ``failed`` when this forwarder cannot carry it out (a CSCI-ID that is no IP:port
locator, an egress forwarder without a tunnel), ``superseded`` when an active or expired rule
names it in ``supersedes`` (whichever of the two arrived first: a late older instruction stays
superseded, agent draft 9.2), ``expired`` once its effective expiry has passed, else
``active``. The expiry runs from ``installed-at``, or from when the forwarder first accepted
the entry's current content (:class:`Accepted`), so that re-sending an identical instruction
never extends it (agent draft 8.1 P8, 9.1 MSG-10).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from agents.forwarder.values import (
    EntryKey,
    EntryState,
    Expiry,
    FallbackMode,
    Kind,
    Rule,
    ServiceEntry,
    Steering,
    locator,
)
from controller.types import CommitmentId, CsId, ForwarderId, SessionId

Entry = ServiceEntry | Rule
RuleIndex = dict[tuple[CsId, SessionId | None], tuple[Rule, ...]]


@dataclass(frozen=True, slots=True)
class Accepted:
    """When the forwarder first accepted an entry with this content."""

    fingerprint: str
    at: float


@dataclass(frozen=True, slots=True)
class Status:
    """The forwarding state of one entry (cats-st grouping ``match-counters``)."""

    state: EntryState
    reason: str | None = None
    activated_at: float | None = None
    expires_at: float | None = None
    superseded_by: CommitmentId | None = None
    base: EntryState = EntryState.ACTIVE  # the state before supersedes is applied


@dataclass(frozen=True, slots=True)
class Reach:
    """What the process configuration says this forwarder can reach."""

    forwarder_id: ForwarderId | None = None
    tunnels: frozenset[str] = frozenset()  # egress forwarders with a data-plane address


@dataclass(frozen=True, slots=True)
class Table:
    """The steering configuration with the state of each entry and the lookup index."""

    steering: Steering = field(default_factory=Steering)
    accepted: dict[EntryKey, Accepted] = field(default_factory=dict)
    status: dict[EntryKey, Status] = field(default_factory=dict)
    rules: RuleIndex = field(default_factory=dict)  # active rules, in precedence order
    next_due: float | None = None  # the earliest expiry of an active entry
    supersessors: dict[CommitmentId, frozenset[CommitmentId]] = field(default_factory=dict)
    due_ties: int = 0  # how many active entries expire at next_due


def effective_expiry(expiry: Expiry, accepted_at: float) -> float | None:
    """The earlier of start + lifetime and expires-at (None: the entry does not expire)."""
    start = expiry.installed_at if expiry.installed_at is not None else accepted_at
    times = [start + expiry.lifetime] if expiry.lifetime is not None else []
    if expiry.expires_at is not None:
        times.append(expiry.expires_at)
    return min(times) if times else None


def accept(
    before: Mapping[EntryKey, Accepted], steering: Steering, now: float
) -> dict[EntryKey, Accepted]:
    """Acceptance times: kept for unchanged content, ``now`` for new or revised entries."""
    found: dict[EntryKey, Accepted] = {}
    for key, entry in steering.entries().items():
        kept = before.get(key)
        same = kept is not None and kept.fingerprint == entry.fingerprint
        found[key] = kept if same and kept is not None else Accepted(entry.fingerprint, now)
    return found


def problem(entry: Entry, reach: Reach) -> str | None:  # noqa: PLR0911 - one per reason
    """Why this forwarder cannot carry the entry out, or None."""
    if entry.mode is FallbackMode.DEFAULT_ROUTE:
        return None
    if entry.mode is FallbackMode.NETWORK_ONLY:
        assert isinstance(entry, ServiceEntry)  # the schema allows it per service only
        if entry.egress is not None and entry.egress == reach.forwarder_id:
            if not any(locator(c) for c in entry.local_csci_ids):
                return "network-only at this egress: no local CSCI-ID is an IP:port locator"
            return None
        if entry.egress not in reach.tunnels:
            return f"no tunnel to egress forwarder {entry.egress}"
        return None
    if entry.csci_id is None or locator(entry.csci_id) is None:
        return f"CSCI-ID {entry.csci_id} is not an IP:port locator"
    return None


def precedence(rule: Rule, accepted_at: float) -> tuple[int, int, float, str]:
    """Sort key: priority, then the most specific match, then the latest installed-at."""
    installed = rule.expiry.installed_at
    latest = installed if installed is not None else accepted_at
    return (rule.priority, -rule.match.specificity, -latest, rule.commitment_id)


def _base(entry: Entry, accepted_at: float, now: float, reach: Reach) -> Status:
    """The state of an entry on its own: failed, expired or active."""
    expires = effective_expiry(entry.expiry, accepted_at)
    reason = problem(entry, reach)
    if reason is not None:
        return Status(EntryState.FAILED, reason, None, expires, base=EntryState.FAILED)
    if expires is not None and expires <= now:
        why = "lifetime passed without renewal"
        return Status(EntryState.EXPIRED, why, None, expires, base=EntryState.EXPIRED)
    return Status(EntryState.ACTIVE, None, None, expires)


def _final(own: Status, winner: CommitmentId | None, previous: Status | None, now: float) -> Status:
    """The state with supersedes applied, keeping the activation time of an active entry."""
    if winner is not None and own.base is not EntryState.FAILED:
        why = f"superseded by commitment {winner}"
        return replace(
            own, state=EntryState.SUPERSEDED, reason=why, activated_at=None, superseded_by=winner
        )
    if own.state is EntryState.ACTIVE:
        kept = previous is not None and previous.state is EntryState.ACTIVE
        return replace(own, activated_at=previous.activated_at if kept and previous else now)
    return own


def _winner(
    commitment: CommitmentId,
    supersessors: Mapping[CommitmentId, frozenset[CommitmentId]],
    base: Callable[[EntryKey], EntryState | None],
) -> CommitmentId | None:
    """The rule that supersedes a commitment: one naming it that is active or expired."""
    for name in sorted(supersessors.get(commitment, ())):
        if base(EntryKey(Kind.RULE, name)) in (EntryState.ACTIVE, EntryState.EXPIRED):
            return name
    return None


def _slot(rule: Rule) -> tuple[CsId, SessionId | None]:
    return (rule.cs_id, rule.match.session_id)


def _due(status: Status | None) -> float | None:
    """The expiry that counts for :attr:`Table.next_due`: of an active entry only."""
    if status is None or status.state is not EntryState.ACTIVE:
        return None
    return status.expires_at or None


def _next_due(status: Mapping[EntryKey, Status]) -> tuple[float | None, int]:
    """The earliest expiry of an active entry, and how many entries expire then."""
    due = [found for s in status.values() if (found := _due(s)) is not None]
    if not due:
        return None, 0
    earliest = min(due)
    return earliest, due.count(earliest)


def build(
    steering: Steering,
    accepted: Mapping[EntryKey, Accepted],
    now: float,
    reach: Reach,
    before: Mapping[EntryKey, Status] | None = None,
) -> Table:
    """The table of ``steering`` at ``now`` (``before``: the previous states, which keep the
    activation time of entries that stay active)."""
    entries = steering.entries()
    bases = {key: _base(e, accepted[key].at, now, reach) for key, e in entries.items()}
    supersessors: dict[CommitmentId, set[CommitmentId]] = {}
    for rule in steering.rules.values():
        if rule.supersedes is not None:
            supersessors.setdefault(rule.supersedes, set()).add(rule.commitment_id)
    frozen = {name: frozenset(found) for name, found in supersessors.items()}
    previous = before or {}
    status: dict[EntryKey, Status] = {}

    def base(key: EntryKey) -> EntryState | None:
        return bases[key].base if key in bases else None

    for key in entries:
        rule_id = CommitmentId(key.name)
        winner = _winner(rule_id, frozen, base) if key.kind is Kind.RULE else None
        status[key] = _final(bases[key], winner, previous.get(key), now)
    index: dict[tuple[CsId, SessionId | None], list[Rule]] = {}
    for rule in steering.rules.values():
        if status[rule.key].state is EntryState.ACTIVE:
            index.setdefault(_slot(rule), []).append(rule)
    rules = {
        slot: tuple(sorted(found, key=lambda r: precedence(r, accepted[r.key].at)))
        for slot, found in index.items()
    }
    due, ties = _next_due(status)
    return Table(steering, dict(accepted), status, rules, due, frozen, ties)


def _accepted(
    table: Table, steering: Steering, keys: set[EntryKey], now: float
) -> dict[EntryKey, Accepted]:
    """Acceptance times after a change of ``keys`` (:func:`accept`, for those keys only)."""
    accepted = dict(table.accepted)
    for key in keys:
        new = _get(steering, key)
        held = accepted.get(key)
        if new is None:
            accepted.pop(key, None)
        elif held is None or held.fingerprint != new.fingerprint:
            accepted[key] = Accepted(new.fingerprint, now)
    return accepted


def _relinked(
    table: Table, steering: Steering, keys: set[EntryKey]
) -> tuple[dict[CommitmentId, frozenset[CommitmentId]], set[EntryKey]]:
    """Who supersedes whom after a change of ``keys``, and the rules whose supersessors
    changed (they are re-evaluated too)."""
    links = {name: set(found) for name, found in table.supersessors.items()}
    affected: set[EntryKey] = set()
    for key in keys:
        for entry, add in ((_get(table.steering, key), False), (_get(steering, key), True)):
            if isinstance(entry, Rule) and entry.supersedes is not None:
                named = links.setdefault(entry.supersedes, set())
                (named.add if add else named.discard)(entry.commitment_id)
                affected.add(EntryKey(Kind.RULE, entry.supersedes))
    return {name: frozenset(found) for name, found in links.items() if found}, affected


def _reindexed(
    table: Table,
    steering: Steering,
    affected: set[EntryKey],
    status: Mapping[EntryKey, Status],
    accepted: Mapping[EntryKey, Accepted],
) -> RuleIndex:
    """The lookup index with the slots of the affected rules rebuilt."""
    rules = dict(table.rules)
    changed = [r for k in affected for r in (_get(table.steering, k), _get(steering, k))]
    added: dict[tuple[CsId, SessionId | None], list[Rule]] = {}
    for key in affected:
        rule = _get(steering, key)
        if isinstance(rule, Rule) and key in status and status[key].state is EntryState.ACTIVE:
            added.setdefault(_slot(rule), []).append(rule)
    for slot in {_slot(r) for r in changed if isinstance(r, Rule)}:
        kept = [r for r in rules.get(slot, ()) if r.key not in affected] + added.get(slot, [])
        if kept:
            rules[slot] = tuple(sorted(kept, key=lambda r: precedence(r, accepted[r.key].at)))
        else:
            rules.pop(slot, None)
    return rules


def update(
    table: Table, steering: Steering, keys: Iterable[EntryKey], now: float, reach: Reach
) -> Table:
    """The table after a change of the entries ``keys`` only (same result as :func:`build`,
    in time proportional to the change rather than to the table)."""
    touched = set(keys)
    accepted = _accepted(table, steering, touched, now)
    supersessors, linked = _relinked(table, steering, touched)
    affected = touched | linked
    bases = {
        key: _base(entry, accepted[key].at, now, reach)
        for key in touched
        if (entry := _get(steering, key)) is not None
    }

    def base(key: EntryKey) -> EntryState | None:
        found = bases.get(key) or table.status.get(key)
        present = _get(steering, key) is not None
        return found.base if found is not None and present else None

    status = dict(table.status)
    for key in affected:
        entry = _get(steering, key)
        if entry is None:
            status.pop(key, None)
            continue
        own = bases.get(key) or _unsuperseded(table.status[key])
        rule_id = CommitmentId(key.name)
        winner = _winner(rule_id, supersessors, base) if key.kind is Kind.RULE else None
        status[key] = _final(own, winner, table.status.get(key), now)
    rules = _reindexed(table, steering, affected, status, accepted)
    due, ties = _next_due_after(table, status, affected)
    return Table(steering, accepted, status, rules, due, supersessors, ties)


def _next_due_after(
    table: Table, status: Mapping[EntryKey, Status], affected: set[EntryKey]
) -> tuple[float | None, int]:
    """:func:`_next_due` after a change of ``affected``, from the change alone, unless the
    change took away every entry that expired earliest (then the table is scanned)."""
    earliest, ties = table.next_due, table.due_ties
    ties -= sum(1 for key in affected if _due(table.status.get(key)) == earliest)
    if earliest is not None and ties <= 0:
        return _next_due(status)
    for key in affected:
        due = _due(status.get(key))
        if due is None:
            continue
        if earliest is None or due < earliest:
            earliest, ties = due, 1
        elif due == earliest:
            ties += 1
    return earliest, ties


def _unsuperseded(status: Status) -> Status:
    """A kept status as its base state (supersedes is applied again)."""
    if status.state is not EntryState.SUPERSEDED:
        return status
    reason = "lifetime passed without renewal" if status.base is EntryState.EXPIRED else None
    return replace(status, state=status.base, reason=reason, superseded_by=None)


def _get(steering: Steering, key: EntryKey) -> Entry | None:
    return steering.entry(key)


def newly_expired(
    before: Table, after: Table, keys: Iterable[EntryKey] | None = None
) -> list[EntryKey]:
    """Entries expired in ``after`` that were not, with this content, in ``before``."""
    found = []
    for key in after.status if keys is None else keys:
        status = after.status.get(key)
        if status is None or status.state is not EntryState.EXPIRED:
            continue
        old, seen = before.status.get(key), before.accepted.get(key)
        same = seen is not None and seen == after.accepted.get(key)
        if old is None or old.state is not EntryState.EXPIRED or not same:
            found.append(key)
    return found


def rebuild(table: Table, now: float, reach: Reach) -> tuple[Table, list[EntryKey]]:
    """The table at ``now`` and the entries that expired since (for rule-expired)."""
    due = [
        key
        for key, status in table.status.items()
        if status.base is EntryState.ACTIVE
        and status.expires_at is not None
        and status.expires_at <= now
    ]
    after = update(table, table.steering, due, now, reach)
    return after, newly_expired(table, after, due)
