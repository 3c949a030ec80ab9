"""Crypt-hash passwords of ietf-system users (RFC 7317 ``crypt-hash``), checked with passlib.

Checking a 5000-round hash costs milliseconds, so :class:`PasswordCheck` caches the outcome per
(user, hash, digest of the password): a changed password or hash misses the cache.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping

from passlib.hash import md5_crypt, sha256_crypt, sha512_crypt

#: The crypt-hash schemes ietf-system names (RFC 7317 ``crypt-hash``), by their prefix.
SCHEMES = {"$1$": md5_crypt, "$5$": sha256_crypt, "$6$": sha512_crypt}
CACHE_SIZE = 1024
_CACHE_SALT = b"password-check-cache"


def hash_password(password: str) -> str:
    """A ``$6$`` (SHA-512 crypt) hash for ``ietf-system:.../user/password``."""
    return str(sha512_crypt.hash(password))


def verify(password: str, crypt_hash: str) -> bool:
    """Whether a password matches a crypt hash; unknown schemes never match."""
    scheme = SCHEMES.get(crypt_hash[:3])
    if scheme is None:
        return False
    try:
        return bool(scheme.verify(password, crypt_hash))
    except ValueError:
        return False


class PasswordCheck:
    """Checks passwords against the hashes a callable returns (name -> crypt hash), cached."""

    def __init__(self, hashes: Callable[[], Mapping[str, str]]) -> None:
        self._hashes = hashes
        self._cache: OrderedDict[tuple[str, str, bytes], bool] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, user: str, password: str) -> bool:
        """Whether ``password`` is the user's (False for an unknown user)."""
        crypt_hash = self._hashes().get(user)
        if crypt_hash is None:
            return False
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
        return known
