"""The session registry's bound (controller.netconf.sessions)."""

from __future__ import annotations

from controller.netconf.sessions import Registry, SessionInfo


def test_registry_refuses_past_the_bound() -> None:
    registry = Registry()
    infos = [SessionInfo(registry.next_id(), "u", "h", lambda _: None) for _ in range(3)]
    assert registry.add(infos[0], 2)
    assert registry.add(infos[1], 2)
    assert not registry.add(infos[2], 2)
    registry.remove(infos[0].session_id, dropped=False)
    assert registry.add(infos[2], 2)
    assert registry.statistics.in_sessions == 3
