"""The C-SMA's agent state view: per reuse key and instance, presence, residency tier, size,
age, retention, retrieval and recompute cost (agent-selection-mapping 7.2, Table 4).

Pure values: the view is seeded from the configuration and changed by reservations
(:mod:`agents.csma.reservations`), by retention running out and by an operator's reload of
the configuration. :func:`query` answers MSG-5 with MSG-6 (9.1): a key the C-SMA cannot
answer for is 'unknown', never 'absent' (M23, M24); :func:`presence_changes` finds what
``state-presence-changed`` reports (M25, M42). Times are Unix seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum

from agents.common.clock import date_and_time
from agents.csma.values import MS
from controller.types import CsciId, Json, ReservationId, ReuseKey, TenantId

MODULE = "ietf-cats-agent-selection"
ElementKey = tuple[CsciId, TenantId, ReuseKey]


class Presence(StrEnum):
    """cats-t:presence."""

    PRESENT = "present"
    ABSENT = "absent"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Element:
    """One working set element at one instance, for one tenant (7.2)."""

    csci_id: CsciId
    tenant: TenantId
    reuse_key: ReuseKey
    presence: Presence
    residency: str | None = None  # residency-tier identity name
    element_class: str | None = None  # working-set-class identity name
    size: int | None = None
    retrieval_cost: Decimal | None = None  # ms
    recompute_cost: Decimal | None = None  # ms
    held_since: float | None = None  # when the held state was produced (age origin)
    retention: int | None = None  # seconds from held_since
    reservation: ReservationId | None = None  # the reservation that brought it here

    @property
    def key(self) -> ElementKey:
        """(CSCI-ID, tenant, reuse key)."""
        return (self.csci_id, self.tenant, self.reuse_key)

    def evicted(self) -> Element:
        """The element once no longer held: absent, without tier, age or retention."""
        return replace(
            self,
            presence=Presence.ABSENT,
            residency=None,
            held_since=None,
            retention=None,
            reservation=None,
        )

    def expires_at(self) -> float | None:
        """When retention runs out (None: kept until released)."""
        if self.presence is not Presence.PRESENT or self.held_since is None:
            return None
        return None if self.retention is None else self.held_since + self.retention


@dataclass(frozen=True, slots=True)
class StateQuery:
    """The query-state input (MSG-5): keys and instances, never content."""

    tenant: TenantId
    keys: tuple[ReuseKey, ...]
    csci_ids: frozenset[CsciId] = frozenset()


@dataclass(frozen=True, slots=True)
class StateView:
    """Every element the C-SMA knows of, and the instances it answers for."""

    elements: Mapping[ElementKey, Element] = field(default_factory=dict)
    instances: frozenset[CsciId] = frozenset()

    def with_elements(self, changed: Iterable[Element]) -> StateView:
        """The view with ``changed`` replacing the elements of the same key."""
        return replace(self, elements={**self.elements, **{e.key: e for e in changed}})


#: How long an answer may be relied on (agent draft 7.5, M20, M41): the view it describes is
#: the C-SMA's own at ``collected-at``, and every later presence change is notified
#: (state-presence-changed), so a few seconds bound what a consumer may miss in between.
FRESHNESS_BOUND_MS = "5000.000"


def _ms(value: Decimal) -> str:
    return str(value.quantize(MS))


def element_json(element: Element, now: float, source: str) -> Json:
    """One ``state-element-view`` (9.1 MSG-6); tier, age and retention only when present."""
    doc: Json = {"reuse-key": element.reuse_key, "presence": element.presence.value}
    present = element.presence is Presence.PRESENT
    if present and element.residency:
        doc["residency"] = f"{MODULE}:{element.residency}"
    if element.element_class:
        doc["element-class"] = f"{MODULE}:{element.element_class}"
    if element.size is not None:
        doc["element-size"] = str(element.size)
    if element.retrieval_cost is not None:
        doc["retrieval-cost"] = _ms(element.retrieval_cost)
    if element.recompute_cost is not None:
        doc["recompute-cost"] = _ms(element.recompute_cost)
    if present and element.held_since is not None:
        doc["state-age"] = _ms(Decimal(max(0.0, now - element.held_since)) * 1000)
    expires = element.expires_at()
    if expires is not None:
        doc["retention"] = max(0, int(expires - now))
    doc["collected-at"] = date_and_time(now)
    doc["freshness-bound"] = FRESHNESS_BOUND_MS
    doc["source"] = source
    doc["confidence"] = "asserted"
    return doc


def query(view: StateView, asked: StateQuery, now: float, source: str) -> Json:
    """The query-state output (MSG-6) for the asked instances (all when none are named).

    An instance the C-SMA answers for holds what its view says and nothing else (absent); an
    instance it does not answer for gets 'unknown' for every key.
    """
    tenant = asked.tenant
    wanted = list(dict.fromkeys(asked.keys))
    candidates = []
    for csci in sorted(asked.csci_ids) or sorted(view.instances):
        elements = []
        for key in wanted:
            known = view.elements.get((csci, tenant, key))
            if known is None:
                presence = Presence.ABSENT if csci in view.instances else Presence.UNKNOWN
                known = Element(csci, tenant, key, presence)
            elements.append(element_json(known, now, source))
        candidates.append({"csci-id": csci, "element": elements})
    return {"tenant": tenant, "candidate": candidates}


def evict_expired(view: StateView, now: float) -> StateView:
    """Present elements whose retention has run out become absent (7.2 retention)."""
    gone = [
        e.evicted()
        for e in view.elements.values()
        if e.reservation is None and (at := e.expires_at()) is not None and at <= now
    ]
    return view.with_elements(gone) if gone else view


def _observable(element: Element | None) -> tuple[Presence, str | None]:
    if element is None:
        return (Presence.ABSENT, None)
    return (element.presence, element.residency)


def presence_changes(
    before: StateView, after: StateView
) -> dict[tuple[CsciId, TenantId], list[Element]]:
    """The elements whose presence or residency changed, per (instance, tenant) (M42)."""
    changed: dict[tuple[CsciId, TenantId], list[Element]] = {}
    for key in sorted(set(before.elements) | set(after.elements)):
        old, new = before.elements.get(key), after.elements.get(key)
        if _observable(old) != _observable(new):
            element = new if new is not None else Element(*key, Presence.ABSENT)
            changed.setdefault((key[0], key[1]), []).append(element)
    return changed


def notifications(before: StateView, after: StateView, now: float, source: str) -> list[Json]:
    """``state-presence-changed`` documents for what changed from ``before`` to ``after``."""
    return [
        {
            f"{MODULE}:state-presence-changed": {
                "c-sma": source,
                "csci-id": csci,
                "tenant": tenant,
                "element": [element_json(e, now, source) for e in elements],
            }
        }
        for (csci, tenant), elements in presence_changes(before, after).items()
    ]


def reseed(view: StateView, seeded: Iterable[Element], instances: frozenset[CsciId]) -> StateView:
    """The view after an operator's new seed: seeded elements replace theirs, elements brought
    by a reservation stay, elements no longer seeded become absent."""
    fresh = {e.key: e for e in seeded}
    kept = {k: e for k, e in view.elements.items() if e.reservation is not None}
    dropped = {
        k: e.evicted()
        for k, e in view.elements.items()
        if k not in fresh and k not in kept and e.presence is Presence.PRESENT
    }
    return StateView({**dropped, **fresh, **kept}, instances)


def state_json(view: StateView, cs_ids: Mapping[CsciId, str], now: float, source: str) -> Json:
    """The view as operational data: agent-selection/candidates/candidate/resource-view/
    storage/state/element, one candidate per instance the C-SMA answers for."""
    by_instance: dict[CsciId, list[Element]] = {csci: [] for csci in sorted(view.instances)}
    for element in view.elements.values():
        by_instance.setdefault(element.csci_id, []).append(element)
    candidates = []
    for csci, elements in by_instance.items():
        rendered = [
            {"tenant": e.tenant, **element_json(e, now, source)}
            for e in sorted(elements, key=lambda e: (e.tenant, e.reuse_key))
        ]
        candidate: Json = {"csci-id": csci, "cs-id": cs_ids.get(csci, "unknown")}
        candidate["resource-view"] = {"storage": {"state": {"element": rendered}}}
        candidates.append(candidate)
    return {f"{MODULE}:agent-selection": {"candidates": {"candidate": candidates}}}
