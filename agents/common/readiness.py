"""Whether an agent process serves yet, for its ``/readyz`` (controller.observability.listener).

:func:`track` is called once by ``start_operations`` with the process's readiness, whose
``serving`` check fails until the agent calls :func:`serving`: once its listeners are up (SCI,
C-SMA, forwarder) or its reporting loop runs (C-NMA). Without :func:`track` (an agent run in
process by a test) :func:`serving` does nothing.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.observability.listener import Readiness

SERVING = "serving"
_lock = threading.Lock()
_tracked: list[Readiness] = []


def track(readiness: Readiness) -> None:
    """Make ``readiness`` wait for :func:`serving`."""
    readiness.expect(SERVING)
    with _lock:
        _tracked.append(readiness)


def serving() -> None:
    """The agent serves: its ``/readyz`` may answer ready."""
    with _lock:
        for readiness in _tracked:
            readiness.done(SERVING)
