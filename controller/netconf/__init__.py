"""RFC 6241/6242 northbound: SSH server, framing, sessions and operations over the server core.

``NetconfServer`` and ``NetconfSettings`` are imported when first asked for (PEP 562), so that
importing a light submodule (:mod:`.bounds`, for the command line) does not import paramiko.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.netconf.server import NetconfServer, NetconfSettings

__all__ = ["NetconfServer", "NetconfSettings"]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.server"), name)
