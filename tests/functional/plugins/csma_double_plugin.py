"""A ``catsctl serve --plugin`` standing in for a C-SMA: query-state, reserve-state and
release-state from an in-memory table (tests/unit/agent_selection/csma_double.py).

``CATS_CSMA_TABLE`` names a JSON file ``{"held": [[csci-id, tenant, reuse-key], ...],
"refuse": [csci-id, ...], "validity": seconds}``; every call is appended as one JSON line
(operation, members, output) to the file named by ``CATS_CSMA_LOG``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.datastore.api import Principal, Registrations
from controller.southbound import Target
from tests.unit.agent_selection.csma_double import CsmaDouble

TABLE_ENV, LOG_ENV = "CATS_CSMA_TABLE", "CATS_CSMA_LOG"
AS = "ietf-cats-agent-selection"
Json = dict[str, Any]
SELF = Target("csma-double", "127.0.0.1")


def register(registrations: Registrations) -> None:
    """Serve the three C-SMA RPCs from the table."""
    table = json.loads(Path(os.environ[TABLE_ENV]).read_text())
    log = Path(os.environ[LOG_ENV])
    double = CsmaDouble(refuse=set(table.get("refuse", ())), validity=table.get("validity", 60))
    for csci_id, tenant, key in table.get("held", ()):
        double.hold(csci_id, tenant, key)
    guard = threading.Lock()

    def serving(name: str, call: Callable[[Target, Json], Json]) -> Callable[..., Json]:
        def handler(principal: Principal, members: Json) -> Json:
            del principal
            with guard:
                output = call(SELF, members)
                with log.open("a", encoding="utf-8") as sink:
                    sink.write(json.dumps([name, members, output]) + "\n")
            return output

        return handler

    registrations.rpcs[f"/{AS}:query-state"] = serving("query-state", double.query_state)
    registrations.rpcs[f"/{AS}:reserve-state"] = serving("reserve-state", double.reserve_state)
    registrations.rpcs[f"/{AS}:release-state"] = serving("release-state", double.release_state)
