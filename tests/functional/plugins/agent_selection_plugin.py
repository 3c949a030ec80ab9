"""A ``catsctl serve --plugin`` that installs the C-PS's agent selection (issue 7).

Until controller.app wires :class:`~controller.agent_selection.AgentSelection` itself, this
plugin installs it: the C-SMAs are reached over NETCONF with the credentials of
``CATS_AS_CSMA_USER``/``CATS_AS_CSMA_PASSWORD``. A plugin gets no server core, so the
configuration is read from the JSON file named by ``CATS_AS_CONFIG`` (the same
``agent-selection`` container the test seeds into running) instead of from running, and
notifications are not published (plugins cannot publish yet).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from controller.agent_selection import AgentSelection, AgentSelectionSettings
from controller.agent_selection import register as wire
from controller.agent_selection.config import AgentConfig, parse
from controller.datastore.api import Registrations
from controller.southbound import Credentials, NetconfStateAgents, PeerSettings

CONFIG_ENV = "CATS_AS_CONFIG"
USER_ENV, PASSWORD_ENV = "CATS_AS_CSMA_USER", "CATS_AS_CSMA_PASSWORD"
STATE_ENV = "CATS_AS_STATE_DIR"


def register(registrations: Registrations) -> None:
    """Install agent selection with its southbound to the C-SMAs."""
    document = json.loads(Path(os.environ[CONFIG_ENV]).read_text())
    parsed = parse(document)

    def config() -> AgentConfig:
        return parsed

    agents = NetconfStateAgents(
        Credentials(os.environ[USER_ENV], os.environ[PASSWORD_ENV]),
        PeerSettings(timeout=10.0),
    )
    state_dir = os.environ.get(STATE_ENV)
    settings = AgentSelectionSettings(state_dir=None if state_dir is None else Path(state_dir))
    wire(registrations, AgentSelection(config, agents, settings=settings))
