"""The process loop of an agent: serve until SIGTERM or SIGINT, reload on SIGHUP.

:class:`Signals` is what the handlers set; :func:`install_handlers` binds them and
:func:`serve_until_stopped` waits on them, calling ``reload`` for each SIGHUP. A reload that
fails with a configuration error keeps the running configuration and logs the items.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from controller.errors import CatsError

LOG = logging.getLogger("agents")
POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class Signals:
    """What the signal handlers set: stop the process, reload the configuration."""

    stop: threading.Event = field(default_factory=threading.Event)
    reload: threading.Event = field(default_factory=threading.Event)


def install_handlers(signals: Signals) -> None:
    """SIGTERM and SIGINT set ``stop``; SIGHUP sets ``reload``."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: signals.stop.set())
    signal.signal(signal.SIGHUP, lambda *_: signals.reload.set())


def serve_until_stopped(signals: Signals, reload: Callable[[], None] | None = None) -> None:
    """Wait for ``stop``; on each ``reload`` signal call ``reload`` (errors are logged)."""
    while not signals.stop.is_set():
        if signals.reload.wait(POLL_S):
            signals.reload.clear()
            if reload is None:
                LOG.info("SIGHUP: nothing to reload")
                continue
            try:
                reload()
            except CatsError as exc:
                for item in exc.items:
                    LOG.error("reload refused, configuration kept: %s", item)
