"""State presence learned by subscription: the C-PS's cache of what the C-SMAs hold (M42, M40).

Each C-SMA notifies every change of presence or residency (``state-presence-changed``, the
notification mode of state availability, M42). While the C-PS's subscription to a C-SMA
stands, what that C-SMA answered (MSG-6) or notified stays true until it notifies otherwise,
so the C-PS asks again only for what it does not know (never asked, ``unknown``, or learned
more than half a :data:`LIFETIME` ago) instead of the whole working set at every candidate at
every decision (M40: at the point of need). The values it keeps are the C-SMA's, with the
C-SMA as their source; their freshness is the cache's: collected when learned, valid for
:data:`LIFETIME` (7.4, M20, M41). When a subscription is lost everything learned from that
C-SMA is dropped and the C-PS asks it again, as it does for a C-SMA it has no subscription
to; an answer to a question asked before the subscription stood is used, not kept (a change
in between could have been missed). An older fact never replaces a newer one: the C-SMA's
own ``collected-at`` orders its answers and its notifications.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from controller.agent_selection.views import state_element
from controller.selection.mapping import Metadata, StateElementView
from controller.selection.mapping.vocabulary import Presence
from controller.southbound import Target
from controller.types import CsciId, Json, ReuseKey, TenantId

StateMap = Mapping[tuple[TenantId, ReuseKey], StateElementView]
Key = tuple[CsciId, TenantId]

LIFETIME = 60.0
"""Seconds a value learned under a live subscription is relied on without asking again."""


@dataclass(frozen=True, slots=True)
class _Fact:
    view: StateElementView
    stamp: float  # the C-SMA's collected-at: orders answers and notifications
    learned: float  # when the C-PS learned it


@dataclass
class _Known:
    target: Target
    facts: dict[ReuseKey, _Fact]
    map: StateMap | None = None  # built on first use after a change
    #: The keys last planned for, and the oldest time one of them was learned (None: one
    #: is not known, or is unknown); reset by every change of the facts.
    summary: tuple[tuple[ReuseKey, ...], float | None] | None = None

    def oldest(self, keys: tuple[ReuseKey, ...]) -> float | None:
        """When the least recently learned of ``keys`` was learned; None when one of them
        must be asked whatever the time (never learned, or 'unknown')."""
        summary = self.summary
        if summary is not None and summary[0] == keys:
            return summary[1]
        oldest: float | None = None
        for key in keys:
            fact = self.facts.get(key)
            if fact is None or fact.view.presence is Presence.UNKNOWN:
                oldest = None
                break
            oldest = fact.learned if oldest is None else min(oldest, fact.learned)
        self.summary = (keys, oldest)
        return oldest


@dataclass(frozen=True, slots=True)
class Plan:
    """What a decision can take from the cache, and what it must ask a C-SMA."""

    cached: dict[CsciId, StateMap]
    ask: list[CsciId]
    keys: list[ReuseKey]


def _gap(fact: _Fact, recent: float) -> bool:
    """Whether a fact must be asked again: learned too long ago, or 'unknown' (unknown is
    kept for the decision that asked, never relied on by the next, MSG-6)."""
    return fact.learned < recent or fact.view.presence is Presence.UNKNOWN


class PresenceCache:
    """Presence per (instance, tenant, reuse key), kept while its C-SMA's subscription
    stands; thread-safe."""

    def __init__(self, lifetime: float = LIFETIME) -> None:
        self._lifetime = lifetime
        self._guard = threading.Lock()
        self._live: dict[Target, float] = {}  # since when each subscription stands
        self._known: dict[Key, _Known] = {}
        self._version = 0  # moves with every change of what is known or live
        #: Per C-SMA, the last plan that asked nothing, what it was made for, and when the
        #: least recently learned of its facts was learned.
        self._plans: dict[Target, tuple[tuple[object, ...], int, float, Plan]] = {}

    def up(self, target: Target, now: float) -> None:
        """The subscription to ``target`` stands (every change from now on is notified)."""
        with self._guard:
            self._live[target] = now
            self._version += 1

    def down(self, target: Target) -> None:
        """The subscription to ``target`` is lost: forget what it told."""
        with self._guard:
            self._live.pop(target, None)
            self._version += 1
            self._known = {k: v for k, v in self._known.items() if v.target != target}

    def live(self, target: Target) -> bool:
        """Whether the subscription to ``target`` stands."""
        with self._guard:
            return target in self._live

    def plan(
        self,
        target: Target,
        csci_ids: Iterable[CsciId],
        tenant: TenantId,
        keys: list[ReuseKey],
        now: float,
    ) -> Plan:
        """The candidates whose every key is known and recent, and the others with the keys
        to ask them (every key when the subscription does not stand)."""
        ids = list(csci_ids)
        with self._guard:
            if target not in self._live:
                return Plan({}, ids, keys)
            recent = now - self._lifetime / 2
            wanted = tuple(keys)
            made_for = (tuple(ids), tenant, wanted)
            last = self._plans.get(target)
            if (
                last is not None
                and last[1] == self._version
                and last[2] >= recent
                and last[0] == made_for
            ):
                return last[3]  # nothing learned since, nothing grown old: the same plan
            cached: dict[CsciId, StateMap] = {}
            ask: list[CsciId] = []
            missing: dict[ReuseKey, None] = {}
            least = float("inf")  # the least recently learned fact relied on
            for csci_id in ids:
                known = self._known.get((csci_id, tenant))
                if known is not None and keys:
                    oldest = known.oldest(wanted)
                    if oldest is not None and oldest >= recent:  # no gap (the common case)
                        cached[csci_id] = self._map(known, tenant)
                        least = min(least, oldest)
                        continue
                facts = {} if known is None else known.facts
                gaps = [k for k in keys if (f := facts.get(k)) is None or _gap(f, recent)]
                if gaps or known is None:
                    ask.append(csci_id)
                    missing.update(dict.fromkeys(gaps))
                else:
                    cached[csci_id] = self._map(known, tenant)
                    least = -float("inf")  # relied on without the fast path: not kept
            plan = Plan(cached, ask, list(missing))
            if not ask and keys:
                self._plans[target] = (made_for, self._version, least, plan)
            return plan

    def answered(
        self, target: Target, tenant: TenantId, output: Json, asked_at: float, now: float
    ) -> dict[CsciId, StateMap] | None:
        """Keep a query-state answer (MSG-6) asked while the subscription stood and return
        the cached state of each candidate it answered for; None when it is not kept (the
        caller then uses the answer as it is)."""
        with self._guard:
            since = self._live.get(target)
            if since is None or asked_at < since:
                return None
            found: dict[CsciId, StateMap] = {}
            for entry in output.get("candidate", ()):
                csci_id = CsciId(str(entry["csci-id"]))
                known = self._learn(target, csci_id, tenant, entry.get("element", ()), now)
                found[csci_id] = self._map(known, tenant)
            return found

    def notified(self, target: Target, members: Json, now: float) -> None:
        """Apply a ``state-presence-changed`` of ``target`` (while its subscription stands)."""
        with self._guard:
            if target not in self._live:
                return
            csci_id = CsciId(str(members["csci-id"]))
            tenant = TenantId(str(members["tenant"]))
            self._learn(target, csci_id, tenant, members.get("element", ()), now)

    def _learn(
        self,
        target: Target,
        csci_id: CsciId,
        tenant: TenantId,
        elements: Iterable[Mapping[str, Any]],
        now: float,
    ) -> _Known:
        self._version += 1
        known = self._known.get((csci_id, tenant))
        if known is None or known.target != target:
            known = self._known[(csci_id, tenant)] = _Known(target, {})
        for element in elements:
            seen = state_element(element)
            key = ReuseKey(str(element["reuse-key"]))
            stamp = seen.meta.collected_at or 0.0
            held = known.facts.get(key)
            if held is None or held.stamp <= stamp:
                meta = Metadata(now, self._lifetime, seen.meta.source, seen.meta.confidence)
                known.facts[key] = _Fact(replace(seen, meta=meta), stamp, now)
                known.map = known.summary = None
        return known

    @staticmethod
    def _map(known: _Known, tenant: TenantId) -> StateMap:
        """The candidate's state for a decision: what it holds and what is unknown there. An
        absent element is left out (the core reads a missing key as absent), so a decision
        probes the few elements a candidate holds, not the whole working set."""
        if known.map is None:
            known.map = MappingProxyType(
                {
                    (tenant, k): f.view
                    for k, f in known.facts.items()
                    if f.view.presence is not Presence.ABSENT
                }
            )
        return known.map
