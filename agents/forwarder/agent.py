"""The forwarder process: the model-driven server (controller.server) with the forwarder
installed, and its data-plane HTTP listener.

Running (the steering configuration) persists in the state directory through the server
core's journal, so a restarted forwarder keeps its rules; :func:`clean_state_dir` empties the
directory first (``--clean``), after which the C-PS's reconciliation must refill it.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import replace
from pathlib import Path

from agents.common.http import HttpServer
from agents.common.runner import Signals, serve_until_stopped, server_settings
from agents.forwarder.config import ForwarderConfig
from agents.forwarder.fencing import YANG_DIR as FENCING_YANG
from agents.forwarder.proxy import DataPlaneApp
from agents.forwarder.service import ForwarderService, installer
from controller.server import Application

LOG = logging.getLogger("agents.forwarder")
MARKER = ".cats-forwarder"


class StateDirError(OSError):
    """A state directory the forwarder refuses to clean."""


def clean_state_dir(state_dir: Path) -> None:
    """Empty a forwarder's state directory (only one this program made, or an empty one)."""
    if not state_dir.exists():
        return
    if any(state_dir.iterdir()) and not (state_dir / MARKER).exists():
        raise StateDirError(f"{state_dir} is not a forwarder state directory ({MARKER} missing)")
    shutil.rmtree(state_dir)
    LOG.info("state directory %s emptied (--clean)", state_dir)


def run_forwarder(config: ForwarderConfig, signals: Signals, *, clean: bool = False) -> int:
    """Serve until ``signals.stop`` is set; returns the exit status."""
    if clean:
        clean_state_dir(config.state_dir)
    config.state_dir.mkdir(parents=True, exist_ok=True)
    (config.state_dir / MARKER).touch()
    server = config.server
    settings = replace(server_settings(config.state_dir, server), yang_dirs=(FENCING_YANG,))
    with Application(settings, installer(config)) as app:
        service = app.hosted
        assert isinstance(service, ForwarderService)
        plane = config.data_plane
        data = DataPlaneApp(service.forwarding, plane, config.roles)
        with HttpServer(
            data, plane.address, plane.port, name="forwarder-data", threads=plane.threads
        ) as http:
            LOG.info(
                "forwarder %s (%s): data plane on %s:%d, NETCONF on %s:%d, RESTCONF on %s:%d, "
                "state in %s",
                config.forwarder_id,
                ",".join(sorted(config.roles)),
                plane.address,
                http.port,
                server.address,
                server.netconf_port,
                server.address,
                server.restconf_port,
                config.state_dir,
            )
            serve_until_stopped(signals)
    return 0
