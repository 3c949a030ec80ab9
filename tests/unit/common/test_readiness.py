"""An agent's /readyz fails until the agent serves (agents.common.readiness)."""

from __future__ import annotations

from agents.common import readiness
from controller.observability.listener import Readiness


def test_a_tracked_agent_is_not_ready_until_it_serves() -> None:
    state = Readiness()
    readiness.track(state)
    assert state.status() == {readiness.SERVING: False}
    readiness.serving()
    assert state.status() == {readiness.SERVING: True}


def test_serving_without_tracking_does_nothing() -> None:
    untracked = Readiness()
    readiness.serving()
    assert untracked.status() == {}
