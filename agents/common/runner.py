"""The process loop of an agent: serve until SIGTERM or SIGINT, reload on SIGHUP.

:class:`Signals` is what the handlers set; :func:`install_handlers` binds them and
:func:`serve_until_stopped` waits on them, calling ``reload`` for each SIGHUP. A reload that
fails with a configuration error keeps the running configuration and logs the items.
:func:`server_settings` are the settings of an agent that is itself a model-driven server
(controller.app: the C-SMA, the forwarder).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agents.common.config import ConfigError
from agents.common.readiness import serving
from controller.netconf.server import NetconfSettings
from controller.restconf.server import ListenSettings
from controller.server import ServeSettings

LOG = logging.getLogger("agents")
POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class Signals:
    """What the signal handlers set: stop the process, reload the configuration."""

    stop: threading.Event = field(default_factory=threading.Event)
    reload: threading.Event = field(default_factory=threading.Event)


class Listeners(Protocol):
    """Where an agent's model-driven server listens (its ``[server]`` table)."""

    @property
    def address(self) -> str:
        """The address of both listeners."""
        ...

    @property
    def restconf_port(self) -> int:
        """The RESTCONF port."""
        ...

    @property
    def netconf_port(self) -> int:
        """The NETCONF port."""
        ...


def server_settings(state_dir: Path, server: Listeners) -> ServeSettings:
    """An agent's model-driven server: RESTCONF and NETCONF where ``server`` says, running
    kept in ``state_dir``."""
    return ServeSettings(
        state_dir,
        listen=ListenSettings(address=server.address, port=server.restconf_port),
        netconf=NetconfSettings(address=server.address, port=server.netconf_port),
    )


def install_handlers(signals: Signals) -> None:
    """SIGTERM and SIGINT set ``stop``; SIGHUP sets ``reload``."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: signals.stop.set())
    signal.signal(signal.SIGHUP, lambda *_: signals.reload.set())


def serve_until_stopped(
    signals: Signals, reload: Callable[[], None] | None = None, *, log: logging.Logger = LOG
) -> None:
    """Wait for ``stop``; on each ``reload`` signal call ``reload``; a configuration error it
    raises is logged to ``log`` (the agent's logger) and the running configuration kept."""
    serving()  # the agent's servers are up
    while not signals.stop.is_set():
        if signals.reload.wait(POLL_S):
            signals.reload.clear()
            if reload is None:
                log.info("SIGHUP: nothing to reload")
                continue
            try:
                reload()
            except ConfigError as exc:
                for item in exc.items:
                    log.error("reload refused, configuration kept: %s", item)
