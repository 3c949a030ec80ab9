"""The C-SMA process: the model-driven server (controller.app) with the C-SMA installed.

:func:`run_csma` serves until ``stop`` is set; ``reload`` (SIGHUP) re-reads the configuration
file: users, reporting settings and the state-view seed (an operator's edit of the view); a
file with errors is refused, logged, and the running configuration kept.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from agents.common.config import ConfigError
from agents.csma.config import CsmaConfig
from agents.csma.service import CsmaService, installer
from controller.app import Application, ServeSettings
from controller.netconf.server import NetconfSettings
from controller.restconf.server import ListenSettings

LOG = logging.getLogger("agents.csma")
Loader = Callable[[], CsmaConfig]


@dataclass(frozen=True, slots=True)
class Signals:
    """What the signal handlers set: stop the process, reload the configuration."""

    stop: threading.Event
    reload: threading.Event


def serve_settings(config: CsmaConfig) -> ServeSettings:
    """The server settings of the C-SMA: its listeners and state directory."""
    server = config.server
    return ServeSettings(
        config.state_dir,
        listen=ListenSettings(address=server.address, port=server.restconf_port),
        netconf=NetconfSettings(address=server.address, port=server.netconf_port),
    )


def _reload(service: CsmaService, load: Loader) -> None:
    try:
        service.reload(load())
    except ConfigError as exc:
        for item in exc.items:
            LOG.error("reload refused, configuration kept: %s", item)


def run_csma(load: Loader, signals: Signals) -> int:
    """Serve and report until ``signals.stop`` is set; returns the exit status."""
    config = load()
    with Application(serve_settings(config), installer(config)) as app:
        service = app.hosted
        assert isinstance(service, CsmaService)
        server = config.server
        LOG.info(
            "c-sma %s: RESTCONF on %s:%d, NETCONF on %s:%d, state in %s",
            config.name, server.address, server.restconf_port, server.address,
            server.netconf_port, config.state_dir,
        )  # fmt: skip
        while not signals.stop.is_set():
            if signals.reload.wait(0.2):
                signals.reload.clear()
                _reload(service, load)
    return 0
