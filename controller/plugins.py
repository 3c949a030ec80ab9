"""Application plugins of ``catsctl serve --plugin MODULE``: state, RPC handlers, commit hooks.

A plugin is an importable Python module with one function::

    def register(registrations: Registrations) -> None: ...

It adds to ``registrations.state`` (data path of a ``config false`` subtree -> provider),
``registrations.rpcs`` (schema path of an RPC or action -> handler) and
``registrations.commit_hooks``, before the core starts (controller.datastore.api describes each
kind). Plugins are applied in the order given; a later one may replace an earlier entry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from controller.datastore.api import Registrations
from controller.errors import CatsError, ErrorItem, ErrorType

#: What a plugin module exposes as ``register``.
Register = Callable[[Registrations], None]


class PluginError(CatsError):
    """A plugin could not be imported, has no ``register``, or refused to register."""


def _refused(name: str, message: str) -> PluginError:
    return PluginError(ErrorItem(ErrorType.APPLICATION, "operation-failed", f"{name}: {message}"))


def load_plugin(name: str) -> Register:
    """The ``register`` function of the module named ``name`` (``package.module``)."""
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise _refused(name, f"cannot import the plugin: {exc}") from exc
    register = getattr(module, "register", None)
    if not callable(register):
        raise _refused(name, "a plugin module needs register(registrations) -> None")
    found: Register = register
    return found


def apply_plugins(names: Sequence[str], registrations: Registrations) -> None:
    """Import each plugin and let it register; the first failure stops the start-up.

    Raises:
        PluginError: naming the plugin that could not be loaded or failed to register.
    """
    for name in names:
        register = load_plugin(name)
        try:
            register(registrations)
        except CatsError:
            raise
        except Exception as exc:
            raise _refused(name, f"register() failed: {exc!r}") from exc
