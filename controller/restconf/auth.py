"""HTTP basic authentication (RFC 7617) against ``ietf-system`` local users (RFC 7317 6).

The header is parsed here; the password check (crypt hashes, cached) is
:meth:`controller.auth.LocalUsers.check_password`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable


def parse_basic(header: str | None) -> tuple[str, str] | None:
    """User and password of an ``Authorization: Basic`` header, or None if there is none."""
    if header is None:
        return None
    scheme, _, credentials = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, colon, password = decoded.partition(":")
    return (user, password) if colon else None


class Authenticator:
    """Checks ``Authorization`` headers with a password check (user, password -> bool)."""

    def __init__(self, check_password: Callable[[str, str], bool]) -> None:
        self._check_password = check_password

    def authenticate(self, header: str | None) -> str | None:
        """The user an Authorization header authenticates, or None."""
        credentials = parse_basic(header)
        if credentials is None:
            return None
        user, password = credentials
        return user if self._check_password(user, password) else None
