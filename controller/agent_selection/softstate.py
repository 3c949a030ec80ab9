"""The soft state of the agent sessions: handoff timeouts, expired commitments and reservations,
and the retention of closed sessions (P8, P9, M39).

:func:`sweep` runs every :data:`SWEEP_PERIOD` seconds on the C-PS's sweeper thread; the RPC
handlers :func:`purge` before they look a session up, so a session past its retention is never
found between two sweeps.
"""

from __future__ import annotations

from controller.agent_selection import handoff
from controller.agent_selection.decide import Effects, settled_handoff
from controller.agent_selection.decisions import Decisions

SWEEP_PERIOD = 0.5


def purge(decisions: Decisions, now: float) -> None:
    """Forget closed sessions past their retention (M39); under the lock."""
    closed = decisions.closed
    while closed and closed[0][0] <= now:
        _, session_id = closed.popleft()
        decisions.forget(session_id)


def sweep(decisions: Decisions) -> None:
    """Abort handoffs past their reservation or timeout; withdraw the steering of expired
    commitments (P8) and hand again what was not handed or not placed; purge closed
    sessions."""
    config = decisions.config()
    now = decisions.clock()
    fx = Effects()
    with decisions.lock:
        purge(decisions, now)
        for found in list(decisions.sessions.values()):
            session = found
            for entry in found.handoffs:
                after = handoff.expired(entry, now)
                if after is not entry:
                    _, bounds = decisions.policy(config, session)
                    settings = decisions.settings_for(config, bounds, now)
                    session = settled_handoff(session, entry, after, settings, fx)
            if session is not found:
                decisions.store(session)
        retry, decisions.retry = decisions.retry, set()
    decisions.follow(fx, retry.union(decisions.instructed.expired(now)))
