"""Session Manager: affinity bindings, expiry, renewal, slots (6.2, 6.3)."""

from __future__ import annotations

from agents.sci.config import AffinitySettings
from agents.sci.sessions import SessionManager
from agents.sci.values import SiId

A, B = SiId("a"), SiId("b")


def test_a_binding_holds_until_the_timeout_and_activity_renews_it() -> None:
    manager = SessionManager(AffinitySettings(binding_timeout_ms=10_000))
    manager.bind("session:x", A, 0.0, session=True)
    assert manager.lookup(("session:x",), 9.0) == A  # renews to 9
    assert manager.lookup(("session:x",), 18.0) == A
    assert manager.lookup(("session:x",), 29.0) is None
    assert manager.counts().expired == 1


def test_without_renewal_the_binding_expires_from_its_creation() -> None:
    manager = SessionManager(AffinitySettings(binding_timeout_ms=10_000, renew_on_activity=False))
    manager.bind("flow:1", A, 0.0, session=False)
    assert manager.lookup(("flow:1",), 9.0) == A
    assert manager.lookup(("flow:1",), 11.0) is None


def test_sessions_and_in_flight_requests_hold_slots() -> None:
    manager = SessionManager(AffinitySettings())
    manager.bind("session:x", A, 0.0, session=True)
    manager.bind("flow:1", A, 0.0, session=False)
    manager.allocate(B)
    manager.allocate(B)
    assert manager.active() == {A: 1, B: 2}
    manager.release(B)
    manager.end("session:x")
    assert manager.active() == {B: 1}
    counts = manager.counts()
    assert (counts.flow_bindings, counts.session_bindings) == (1, 0)


def test_an_unhealthy_instance_loses_its_bindings() -> None:
    manager = SessionManager(AffinitySettings())
    manager.bind("session:x", A, 0.0, session=True)
    manager.bind("flow:1", A, 0.0, session=False)
    manager.bind("flow:2", B, 0.0, session=False)
    assert manager.release_instance(A) == 2
    assert manager.bindings_per_instance() == {B: 1}
    assert manager.counts().rebound == 2


def test_max_bindings_and_expiry_sweep() -> None:
    manager = SessionManager(AffinitySettings(max_bindings=1, binding_timeout_ms=5000))
    assert manager.bind("flow:1", A, 0.0, session=False)
    assert not manager.bind("flow:2", A, 0.0, session=False)
    assert manager.expire(10.0) == 1
    assert manager.bind("flow:2", A, 10.0, session=False)
