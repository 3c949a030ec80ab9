"""A plugin whose ``register`` waits until a file exists (``CATS_TEST_START_GATE``), so that a
test sees a server that is still starting (its datastore not loaded) for as long as it likes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from controller.datastore.api import Registrations

DEADLINE_S = 60.0


def register(registrations: Registrations) -> None:
    """Hold the start-up until the gate file exists (at most a minute)."""
    del registrations
    gate = Path(os.environ["CATS_TEST_START_GATE"])
    deadline = time.monotonic() + DEADLINE_S
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
