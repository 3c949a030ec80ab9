"""Reservations of state at an instance: reserve-state, expiry and release-state (MSG-11/12,
MSG-16; agent-selection-mapping 9.1, 9.3, 14).

Pure: a :class:`Book` and a :class:`~agents.csma.stateview.StateView` in, new ones and the
answer out, with the time passed in (Unix seconds). The rules:

- idempotent (9.3): a repeat of an accepted reservation-id with the same content returns the
  same answer and reserves nothing more; the same id with other content is refused
  (reservation-conflict);
- refused rather than accepted and broken: an unknown tenant (tenant-not-authorized), a size
  the instance cannot hold beside what it holds and has reserved (insufficient-storage), a
  needed-by already past (deadline-not-achievable);
- per-session rate limit (14): at most ``max_rate`` new reservations of a session per
  ``window`` seconds (rate-limit-exceeded); repeats do not count;
- a validity window: valid from acceptance until needed-by plus ``validity`` seconds; an
  expired reservation is not a reservation: :func:`expire` drops it and the elements it
  brought become absent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from agents.csma.stateview import Element, Presence, StateView
from controller.types import CsciId, ReservationId, ReuseKey, SessionId, TenantId

INSUFFICIENT_STORAGE = "insufficient-storage"
DEADLINE = "deadline-not-achievable"
TENANT = "tenant-not-authorized"
RATE = "rate-limit-exceeded"
CONFLICT = "reservation-conflict"


@dataclass(frozen=True, slots=True)
class Wanted:
    """One key the target must hold."""

    reuse_key: ReuseKey
    element_class: str | None = None
    size: int | None = None
    residency: str | None = None


@dataclass(frozen=True, slots=True)
class ReserveRequest:
    """The reserve-state input (MSG-11)."""

    reservation_id: ReservationId
    session_id: SessionId
    tenant: TenantId
    csci_id: CsciId
    elements: tuple[Wanted, ...]
    size: int
    needed_by: float
    handoff_id: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """The reserve-state output (MSG-12)."""

    reservation_id: ReservationId
    accepted: bool = field(kw_only=True)
    valid_from: float | None = None
    valid_until: float | None = None
    refusal: str | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Capacity:
    """What one instance can hold: bytes of state, and the tenants it serves (empty: any)."""

    size: int
    tenants: frozenset[TenantId] = frozenset()


@dataclass(frozen=True, slots=True)
class Policy:
    """Validity window and per-session rate limit."""

    validity: float = 30.0
    max_rate: int = 10
    window: float = 60.0


@dataclass(frozen=True, slots=True)
class Rules:
    """What the C-SMA's configuration says about reservations: each instance's capacity, the
    validity window and the rate limit."""

    capacities: Mapping[CsciId, Capacity]
    policy: Policy = field(default_factory=Policy)


@dataclass(frozen=True, slots=True)
class ReleaseRequest:
    """The release-state input (MSG-16); empty sets match everything."""

    session_id: SessionId
    tenant: TenantId
    reservation_id: ReservationId | None = None
    csci_ids: frozenset[CsciId] = frozenset()
    keys: frozenset[ReuseKey] = frozenset()


@dataclass(frozen=True, slots=True)
class Reservation:
    """An accepted reservation and the keys it brought to the instance."""

    request: ReserveRequest
    answer: Answer
    brought: tuple[ReuseKey, ...]


@dataclass(frozen=True, slots=True)
class Book:
    """The accepted reservations and each session's recent reservation times."""

    reservations: Mapping[ReservationId, Reservation] = field(default_factory=dict)
    attempts: Mapping[SessionId, tuple[float, ...]] = field(default_factory=dict)


def _refused(request: ReserveRequest, reason: str, detail: str) -> Answer:
    return Answer(request.reservation_id, accepted=False, refusal=reason, detail=detail)


def held_size(book: Book, view: StateView, csci: CsciId) -> int:
    """Bytes an instance holds outside reservations plus the bytes reserved at it."""
    held = sum(
        e.size or 0
        for e in view.elements.values()
        if e.csci_id == csci and e.presence is Presence.PRESENT and e.reservation is None
    )
    reserved = sum(r.request.size for r in book.reservations.values() if r.request.csci_id == csci)
    return held + reserved


def _refusal(
    book: Book, view: StateView, capacity: Capacity, request: ReserveRequest, now: float
) -> Answer | None:
    if capacity.tenants and request.tenant not in capacity.tenants:
        return _refused(request, TENANT, f"tenant {request.tenant} is not served here")
    if request.needed_by < now:
        return _refused(request, DEADLINE, "needed-by has passed")
    free = capacity.size - held_size(book, view, request.csci_id)
    if request.size > free:
        return _refused(
            request, INSUFFICIENT_STORAGE, f"{request.size} bytes asked, {max(free, 0)} free"
        )
    return None


def _rate_limited(book: Book, policy: Policy, session: SessionId, now: float) -> bool:
    recent = [t for t in book.attempts.get(session, ()) if t > now - policy.window]
    return len(recent) >= policy.max_rate


def _bring(
    view: StateView, request: ReserveRequest, now: float, until: float
) -> tuple[StateView, tuple[ReuseKey, ...]]:
    brought: list[Element] = []
    for wanted in request.elements:
        key = (request.csci_id, request.tenant, wanted.reuse_key)
        known = view.elements.get(key)
        if known is not None and known.presence is Presence.PRESENT:
            continue  # held already: the reservation keeps it, nothing changes
        base = known or Element(request.csci_id, request.tenant, wanted.reuse_key, Presence.ABSENT)
        brought.append(
            replace(
                base,
                presence=Presence.PRESENT,
                residency=wanted.residency or base.residency,
                element_class=wanted.element_class or base.element_class,
                size=wanted.size if wanted.size is not None else base.size,
                held_since=now,
                retention=max(0, int(until - now)),
                reservation=request.reservation_id,
            )
        )
    return view.with_elements(brought), tuple(e.reuse_key for e in brought)


def reserve(
    book: Book, view: StateView, rules: Rules, request: ReserveRequest, now: float
) -> tuple[Book, StateView, Answer]:
    """Answer one reserve-state (MSG-12); the book and view change only when accepted."""
    known = book.reservations.get(request.reservation_id)
    if known is not None:
        if known.request == request:
            return book, view, known.answer  # idempotent: the same answer, nothing more held
        return book, view, _refused(request, CONFLICT, "the reservation-id is in use")
    policy = rules.policy
    capacity = rules.capacities.get(request.csci_id)
    if capacity is None:
        return book, view, _refused(request, TENANT, f"{request.csci_id} is not served here")
    if _rate_limited(book, policy, request.session_id, now):
        detail = f"more than {policy.max_rate} reservations in {policy.window:g} s"
        return book, view, _refused(request, RATE, detail)
    refusal = _refusal(book, view, capacity, request, now)
    if refusal is not None:
        return book, view, refusal
    until = max(request.needed_by, now) + policy.validity
    answer = Answer(request.reservation_id, now, until, accepted=True)
    view, brought = _bring(view, request, now, until)
    recent = tuple(t for t in book.attempts.get(request.session_id, ()) if t > now - policy.window)
    book = Book(
        {**book.reservations, request.reservation_id: Reservation(request, answer, brought)},
        {**book.attempts, request.session_id: (*recent, now)},
    )
    return book, view, answer


def _drop(book: Book, view: StateView, gone: Iterable[Reservation]) -> tuple[Book, StateView]:
    gone = list(gone)
    if not gone:
        return book, view
    ids = {r.request.reservation_id for r in gone}
    evicted = [
        e.evicted()
        for r in gone
        for key in r.brought
        if (e := view.elements.get((r.request.csci_id, r.request.tenant, key))) is not None
        and e.reservation == r.request.reservation_id
    ]
    kept = {i: r for i, r in book.reservations.items() if i not in ids}
    return replace(book, reservations=kept), view.with_elements(evicted)


def expire(book: Book, view: StateView, now: float) -> tuple[Book, StateView]:
    """Drop the reservations whose validity window has passed."""
    return _drop(
        book,
        view,
        (r for r in book.reservations.values() if (r.answer.valid_until or 0) <= now),
    )


def release(book: Book, view: StateView, request: ReleaseRequest) -> tuple[Book, StateView, int]:
    """release-state (MSG-16): drop the session's matching reservations (those of the named
    instances and holding one of the named keys, when named); how many."""
    gone = [
        r
        for r in book.reservations.values()
        if r.request.session_id == request.session_id
        and r.request.tenant == request.tenant
        and request.reservation_id in (None, r.request.reservation_id)
        and (not request.csci_ids or r.request.csci_id in request.csci_ids)
        and (not request.keys or any(w.reuse_key in request.keys for w in r.request.elements))
    ]
    book, view = _drop(book, view, gone)
    return book, view, len(gone)
