"""HTTP basic authentication (RFC 7617) against ``ietf-system`` local users (RFC 7317 6).

Passwords are stored as crypt hashes (``$1$``, ``$5$``, ``$6$``: RFC 7317 ``crypt-hash``) and
checked with passlib. Checking a 5000-round hash costs milliseconds, so the outcome is cached
per (user, hash, digest of the password): a changed password or hash misses the cache.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping

from passlib.hash import md5_crypt, sha256_crypt, sha512_crypt

#: The crypt-hash schemes ietf-system names (RFC 7317 ``crypt-hash``), by their prefix.
SCHEMES = {"$1$": md5_crypt, "$5$": sha256_crypt, "$6$": sha512_crypt}
CACHE_SIZE = 1024
_CACHE_SALT = b"restconf-basic-auth-cache"


def hash_password(password: str) -> str:
    """A ``$6$`` (SHA-512 crypt) hash for ``ietf-system:.../user/password``."""
    return str(sha512_crypt.hash(password))


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


def verify(password: str, crypt_hash: str) -> bool:
    """Whether a password matches a crypt hash; unknown schemes never match."""
    scheme = SCHEMES.get(crypt_hash[:3])
    if scheme is None:
        return False
    try:
        return bool(scheme.verify(password, crypt_hash))
    except ValueError:
        return False


class Authenticator:
    """Checks credentials against the users a callable returns (name -> crypt hash)."""

    def __init__(self, users: Callable[[], Mapping[str, str]]) -> None:
        self._users = users
        self._cache: OrderedDict[tuple[str, str, bytes], bool] = OrderedDict()
        self._lock = threading.Lock()

    def authenticate(self, header: str | None) -> str | None:
        """The user an Authorization header authenticates, or None."""
        credentials = parse_basic(header)
        if credentials is None:
            return None
        user, password = credentials
        crypt_hash = self._users().get(user)
        if crypt_hash is None:
            return None
        digest = hmac.new(_CACHE_SALT, password.encode(), hashlib.sha256).digest()
        key = (user, crypt_hash, digest)
        with self._lock:
            known = self._cache.get(key)
        if known is None:
            known = verify(password, crypt_hash)
            with self._lock:
                self._cache[key] = known
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return user if known else None
