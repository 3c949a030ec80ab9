"""The C-SMA process: the model-driven server (controller.server) with the C-SMA installed.

:func:`run_csma` serves until ``stop`` is set; ``reload`` (SIGHUP) re-reads the configuration
file: users, reporting settings and the state-view seed (an operator's edit of the view); a
file with errors is refused, logged, and the running configuration kept.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from agents.common.runner import Signals, serve_until_stopped, server_settings
from agents.csma.config import CsmaConfig
from agents.csma.service import CsmaService, installer
from controller.server import Application

LOG = logging.getLogger("agents.csma")
Loader = Callable[[], CsmaConfig]


def run_csma(load: Loader, signals: Signals) -> int:
    """Serve and report until ``signals.stop`` is set; returns the exit status."""
    config = load()
    server = config.server
    with Application(server_settings(config.state_dir, server), installer(config)) as app:
        service = app.hosted
        assert isinstance(service, CsmaService)
        LOG.info(
            "c-sma %s: RESTCONF on %s:%d, NETCONF on %s:%d, state in %s",
            config.name,
            server.address,
            server.restconf_port,
            server.address,
            server.netconf_port,
            config.state_dir,
        )
        serve_until_stopped(signals, lambda: service.reload(load()), log=LOG)
    return 0
