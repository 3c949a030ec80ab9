"""ietf-system local users (RFC 7317 6) and NACM groups (RFC 8341) both northbounds check."""

from controller.auth.passwords import PasswordCheck, hash_password, verify
from controller.auth.users import LocalUsers, UserRecord, groups_of, users_of

__all__ = [
    "LocalUsers",
    "PasswordCheck",
    "UserRecord",
    "groups_of",
    "hash_password",
    "users_of",
    "verify",
]
