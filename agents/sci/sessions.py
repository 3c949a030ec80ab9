"""Session Manager: flow and session affinity, allocation and release (6.2, 6.3).

A *flow* is keyed by the configured 5-tuple fields (for HTTP: one client connection); a
*session* by the value of the configured cookie or header. Bindings expire after
``binding-timeout-ms`` without activity and are renewed by activity when
``renew-on-activity`` is set.

Slots (counted into GAS as the instance's active sessions): a session binding holds one slot
from its first request until it expires or ends; a request outside a session holds one while
it is in flight. Flow bindings carry affinity only: an HTTP flow ends with its connection,
which a WSGI application does not see, so counting flows would leak slots.

The manager is the one mutable owner of this state; every method holds its lock briefly.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, replace

from agents.sci.config import AffinitySettings
from agents.sci.values import SiId


@dataclass(frozen=True, slots=True)
class Binding:
    """An affinity binding of a flow or session key to an instance."""

    si_id: SiId
    last_seen: float
    session: bool


@dataclass(frozen=True, slots=True)
class AffinityCounts:
    """``sci/state/affinity``."""

    flow_bindings: int
    session_bindings: int
    expired: int
    rebound: int


class SessionManager:
    """Affinity bindings and slot allocation of one SCI."""

    def __init__(self, settings: AffinitySettings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._bindings: dict[str, Binding] = {}
        self._in_flight: Counter[SiId] = Counter()
        self._expired = 0
        self._rebound = 0

    def _alive(self, key: str, now: float) -> Binding | None:
        binding = self._bindings.get(key)
        if binding is None:
            return None
        if now - binding.last_seen > self._settings.binding_timeout_ms / 1000:
            del self._bindings[key]
            self._expired += 1
            return None
        if self._settings.renew_on_activity:
            self._bindings[key] = replace(binding, last_seen=now)
        return binding

    def lookup(self, keys: tuple[str, ...], now: float) -> SiId | None:
        """The instance bound to the first of ``keys`` (session key first) that has one."""
        with self._lock:
            for key in keys:
                binding = self._alive(key, now)
                if binding is not None:
                    return binding.si_id
        return None

    def bind(self, key: str, si_id: SiId, now: float, *, session: bool) -> bool:
        """Create or move a binding; False when ``max-bindings`` is reached."""
        with self._lock:
            limit = self._settings.max_bindings
            if key not in self._bindings and limit is not None and len(self._bindings) >= limit:
                return False
            self._bindings[key] = Binding(si_id, now, session)
            return True

    def rebind(self, key: str) -> None:
        """Remove a binding whose instance became UNHEALTHY; a new one follows (6.2)."""
        with self._lock:
            if self._bindings.pop(key, None) is not None:
                self._rebound += 1

    def end(self, key: str) -> None:
        """End a session explicitly (logout): its slot is released (6.3)."""
        with self._lock:
            self._bindings.pop(key, None)

    def release_instance(self, si_id: SiId) -> int:
        """Remove every binding to an instance (terminate its sessions); how many."""
        with self._lock:
            keys = [key for key, b in self._bindings.items() if b.si_id == si_id]
            for key in keys:
                del self._bindings[key]
            self._rebound += len(keys)
            return len(keys)

    def allocate(self, si_id: SiId) -> None:
        """A request outside a session starts at an instance (6.3 Allocation)."""
        with self._lock:
            self._in_flight[si_id] += 1

    def release(self, si_id: SiId) -> None:
        """That request ended (6.3 Release)."""
        with self._lock:
            self._in_flight[si_id] -= 1

    def expire(self, now: float) -> int:
        """Remove the bindings idle for longer than the timeout; how many."""
        with self._lock:
            limit = self._settings.binding_timeout_ms / 1000
            old = [key for key, b in self._bindings.items() if now - b.last_seen > limit]
            for key in old:
                del self._bindings[key]
            self._expired += len(old)
            return len(old)

    def active(self) -> dict[SiId, int]:
        """Slots in use per instance: in-flight requests outside sessions plus sessions."""
        with self._lock:
            counts = Counter(self._in_flight)
            counts.update(b.si_id for b in self._bindings.values() if b.session)
            return {si_id: n for si_id, n in counts.items() if n > 0}

    def bindings_per_instance(self) -> dict[SiId, int]:
        """Affinity bindings per instance."""
        with self._lock:
            return dict(Counter(b.si_id for b in self._bindings.values()))

    def counts(self) -> AffinityCounts:
        """Binding gauges and counters."""
        with self._lock:
            sessions = sum(1 for b in self._bindings.values() if b.session)
            return AffinityCounts(
                len(self._bindings) - sessions, sessions, self._expired, self._rebound
            )
