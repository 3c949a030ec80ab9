"""A plugin whose ``register`` fails, for tests/unit/test_plugins.py."""

from __future__ import annotations

from controller.datastore.api import Registrations


def register(registrations: Registrations) -> None:
    """Fail the way a plugin with a bug would."""
    del registrations
    raise KeyError("missing setting")
