"""agents.csma.reservations with an injected clock: idempotence, refusal, expiry, release."""

from __future__ import annotations

from dataclasses import replace

from agents.csma.reservations import (
    Book,
    Capacity,
    Policy,
    ReleaseRequest,
    ReserveRequest,
    Rules,
    Wanted,
    expire,
    release,
    reserve,
)
from agents.csma.stateview import Element, Presence, StateView
from controller.types import CsciId, ReservationId, ReuseKey, SessionId, TenantId

A = CsciId("10.0.0.1:80")
T = TenantId("t1")
RULES = Rules({A: Capacity(1000, frozenset({T}))}, Policy(validity=30.0, max_rate=2, window=60.0))
HELD = Element(A, T, ReuseKey("held"), Presence.PRESENT, "host-memory", size=400, held_since=0.0)
VIEW = StateView({HELD.key: HELD}, frozenset({A}))


def request(
    rid: str = "r1", size: int = 100, session: str = "s1", **changes: object
) -> ReserveRequest:
    """A reservation of key ``k1`` (and ``held``) at A, needed by t=10."""
    base = ReserveRequest(
        ReservationId(rid),
        SessionId(session),
        T,
        A,
        (Wanted(ReuseKey("k1"), size=size, residency="host-memory"), Wanted(ReuseKey("held"))),
        size,
        10.0,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_accepted_with_a_validity_window_and_the_key_becomes_present() -> None:
    book, view, answer = reserve(Book(), VIEW, RULES, request(), 5.0)
    assert (answer.accepted, answer.valid_from, answer.valid_until) == (True, 5.0, 40.0)
    k1 = view.elements[(A, T, ReuseKey("k1"))]
    assert (k1.presence, k1.residency, k1.reservation) == (Presence.PRESENT, "host-memory", "r1")
    assert view.elements[HELD.key] == HELD  # held already: not touched
    assert book.reservations[ReservationId("r1")].brought == (ReuseKey("k1"),)


def test_a_repeated_request_returns_the_same_answer_and_reserves_once() -> None:
    book, view, first = reserve(Book(), VIEW, RULES, request(), 5.0)
    again_book, again_view, again = reserve(book, view, RULES, request(), 6.0)
    assert again == first
    assert (again_book, again_view) == (book, view)
    assert len(again_book.reservations) == 1


def test_the_same_id_with_other_content_is_a_conflict() -> None:
    book, view, _ = reserve(Book(), VIEW, RULES, request(), 5.0)
    _, _, answer = reserve(book, view, RULES, request(size=200), 6.0)
    assert (answer.accepted, answer.refusal) == (False, "reservation-conflict")


def test_refused_rather_than_accepted_and_broken() -> None:
    too_big = reserve(Book(), VIEW, RULES, request(size=601), 5.0)[2]  # 400 held + 601 > 1000
    assert (too_big.accepted, too_big.refusal) == (False, "insufficient-storage")
    late = reserve(Book(), VIEW, RULES, request(), 11.0)[2]
    assert late.refusal == "deadline-not-achievable"
    stranger = reserve(Book(), VIEW, RULES, request(tenant=TenantId("t2")), 5.0)[2]
    assert stranger.refusal == "tenant-not-authorized"


def test_reserved_bytes_count_against_capacity() -> None:
    book, view, _ = reserve(Book(), VIEW, RULES, request("r1", 500), 5.0)
    answer = reserve(book, view, RULES, request("r2", 101), 5.0)[2]
    assert answer.refusal == "insufficient-storage"


def test_the_rate_limit_is_per_session_and_repeats_do_not_count() -> None:
    book, view, _ = reserve(Book(), VIEW, RULES, request("r1", 10), 1.0)
    book, view, _ = reserve(book, view, RULES, request("r1", 10), 1.5)  # repeat
    book, view, second = reserve(book, view, RULES, request("r2", 10), 2.0)
    assert second.accepted
    third = reserve(book, view, RULES, request("r3", 10), 3.0)[2]
    assert third.refusal == "rate-limit-exceeded"
    other = reserve(book, view, RULES, request("r4", 10, session="s2"), 3.0)[2]
    assert other.accepted
    later = reserve(book, view, RULES, request("r3", 10, needed_by=70.0), 62.0)[2]
    assert later.accepted


def test_an_expired_reservation_is_gone_and_its_keys_absent() -> None:
    book, view, _ = reserve(Book(), VIEW, RULES, request(), 5.0)
    assert expire(book, view, 39.9) == (book, view)
    book, view = expire(book, view, 40.0)
    assert book.reservations == {}
    assert view.elements[(A, T, ReuseKey("k1"))].presence is Presence.ABSENT
    assert view.elements[HELD.key] == HELD


def test_release_drops_the_sessions_reservations_only() -> None:
    book, view, _ = reserve(Book(), VIEW, RULES, request("r1", 10), 1.0)
    book, view, _ = reserve(book, view, RULES, request("r2", 10, session="s2"), 1.0)
    book, view, count = release(book, view, ReleaseRequest(SessionId("s1"), T))
    assert count == 1
    assert list(book.reservations) == [ReservationId("r2")]
    none = release(book, view, ReleaseRequest(SessionId("s2"), T, ReservationId("other")))
    assert none[2] == 0
