"""HTTP basic authentication (RFC 7617) against ``ietf-system`` local users (RFC 7317 6).

The header is parsed here; the login itself (throttled, checked off the request threads,
logged and counted) is :meth:`controller.auth.LocalUsers.login`. A keep-alive connection that
has authenticated remembers a keyed digest of its ``Authorization`` header
(:class:`ConnectionMemo`): its next requests with the same header are admitted while the
credential is still known good, without a new check and past any throttle, which only ever
delays attempts that have not proved themselves (an attacker cannot send on another client's
connection).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass

#: One login attempt: (user, password, transport, source) -> ``ok``, ``failed``,
#: ``throttled`` or ``busy`` (controller.auth.Outcome).
Login = Callable[[str, str, str, str], str]
#: Whether a credential is known good now (checked before, the user's hash unchanged).
KnownGood = Callable[[str, str], bool]
#: Seconds until an attempt of (user, source) is checked again.
RetryAfter = Callable[[str, str], float]
OK = "ok"
_KEY = secrets.token_bytes(32)


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


class ConnectionMemo:
    """What one HTTP connection has proved: the digest of the header that authenticated."""

    __slots__ = ("credential",)

    def __init__(self) -> None:
        self.credential: bytes | None = None


@dataclass(frozen=True, slots=True)
class Authenticated:
    """The outcome of a request's authentication: the user, or why there is none."""

    user: str | None
    outcome: str  # ok, failed (also: no credentials), throttled or busy
    retry_after: float = 0.0  # seconds, when throttled or busy


def _digest(header: str) -> bytes:
    return hmac.new(_KEY, header.encode(errors="surrogatepass"), hashlib.sha256).digest()


class Authenticator:
    """Checks ``Authorization`` headers with a login function."""

    def __init__(self, login: Login, known_good: KnownGood, retry_after: RetryAfter) -> None:
        self._login = login
        self._known_good = known_good
        self._retry_after = retry_after

    def authenticate(
        self, header: str | None, source: str, memo: ConnectionMemo | None = None
    ) -> Authenticated:
        """The user an Authorization header authenticates, or why not."""
        credentials = parse_basic(header)
        if credentials is None or header is None:
            return Authenticated(None, "failed")
        user, password = credentials
        digest = _digest(header)
        if memo is not None and memo.credential is not None:
            if hmac.compare_digest(memo.credential, digest) and self._known_good(user, password):
                return Authenticated(user, OK)
            memo.credential = None
        outcome = self._login(user, password, "restconf", source)
        if outcome == "throttled":
            return Authenticated(None, outcome, self._retry_after(user, source))
        if outcome != OK:
            return Authenticated(None, outcome, 1.0)
        if memo is not None:
            memo.credential = digest
        return Authenticated(user, OK)
