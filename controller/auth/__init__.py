"""ietf-system local users (RFC 7317 6) and NACM groups (RFC 8341) both northbounds check.

The names below are imported from their modules when first asked for (PEP 562), so that
importing a light one (:mod:`.throttle`, for the command line's defaults) does not import
the users and the core.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.auth.logins import Logins, Outcome
    from controller.auth.passwords import SuccessCache, dummy_hash, hash_password, verify
    from controller.auth.throttle import LoginSettings, ThrottleSettings
    from controller.auth.users import LocalUsers, UserRecord, groups_of, users_of

_HOMES = {
    "LocalUsers": "users",
    "LoginSettings": "throttle",
    "Logins": "logins",
    "Outcome": "logins",
    "SuccessCache": "passwords",
    "ThrottleSettings": "throttle",
    "UserRecord": "users",
    "dummy_hash": "passwords",
    "groups_of": "users",
    "hash_password": "passwords",
    "users_of": "users",
    "verify": "passwords",
}
__all__ = [
    "LocalUsers",
    "LoginSettings",
    "Logins",
    "Outcome",
    "SuccessCache",
    "ThrottleSettings",
    "UserRecord",
    "dummy_hash",
    "groups_of",
    "hash_password",
    "users_of",
    "verify",
]


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
