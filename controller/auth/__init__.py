"""ietf-system local users (RFC 7317 6) and NACM groups (RFC 8341) both northbounds check."""

from controller.auth.logins import Logins, LoginSettings, Outcome
from controller.auth.passwords import SuccessCache, dummy_hash, hash_password, verify
from controller.auth.throttle import ThrottleSettings
from controller.auth.users import LocalUsers, UserRecord, groups_of, users_of

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
