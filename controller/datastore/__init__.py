"""NMDA datastores, transactions, locks, persistence, the access-check seam and the
notification bus: the server core both northbounds share.

``Core``, ``CoreSettings`` and ``DatastoreError`` are imported when first asked for (PEP
562), so that importing one light submodule (a start-up's :mod:`.preparse`) does not import
the whole core.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.datastore.core import Core, CoreSettings
    from controller.datastore.errors import DatastoreError

__all__ = ["Core", "CoreSettings", "DatastoreError"]
_HOMES = {"Core": "core", "CoreSettings": "core", "DatastoreError": "errors"}


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
