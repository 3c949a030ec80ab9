"""Crypt-hash passwords of ietf-system users (RFC 7317 ``crypt-hash``).

:func:`verify` checks one password: with the C library's ``crypt`` where the interpreter still
has it (about three times faster than passlib's pure-Python SHA-512 crypt), else with passlib.
A check of a default-rounds ``$6$`` hash costs a CPU-second, so checks run in worker processes
(:mod:`.hashing`), never on a request thread, and only a *successful* check is remembered
(:class:`SuccessCache`): a failure is never cached, so neither a repeated guess nor a repeated
unknown user name answers faster than a first one. :func:`dummy_hash` is what an unknown
user's password is checked against, at the cost of the users' own hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import warnings
from collections import Counter, OrderedDict
from collections.abc import Mapping
from types import ModuleType

from passlib.hash import md5_crypt, sha256_crypt, sha512_crypt

#: The crypt-hash schemes ietf-system names (RFC 7317 ``crypt-hash``), by their prefix.
SCHEMES = {"$1$": md5_crypt, "$5$": sha256_crypt, "$6$": sha512_crypt}
CACHE_SIZE = 1024
_CRYPT_ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: Salt and checksum lengths of each scheme (glibc crypt(5)).
_SHAPES = {"$1$": (8, 22), "$5$": (16, 43), "$6$": (16, 86)}
_ROUNDS = re.compile(r"^\$[156]\$(rounds=\d+\$)?")


def _libc_crypt() -> ModuleType | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt  # noqa: PLC0415 - deprecated since 3.11, gone in 3.13
    except ImportError:
        return None
    return crypt


_CRYPT = _libc_crypt()


def hash_password(password: str) -> str:
    """A ``$6$`` (SHA-512 crypt) hash for ``ietf-system:.../user/password``."""
    return str(sha512_crypt.hash(password))


def verify(password: str, crypt_hash: str) -> bool:
    """Whether a password matches a crypt hash; unknown schemes never match."""
    scheme = SCHEMES.get(crypt_hash[:3])
    if scheme is None:
        return False
    if _CRYPT is not None:
        try:
            computed = _CRYPT.crypt(password, crypt_hash)
        except (OSError, ValueError):  # a NUL in the password: passlib says why
            computed = None
        if computed:
            return hmac.compare_digest(computed, crypt_hash)
    try:
        return bool(scheme.verify(password, crypt_hash))
    except ValueError:
        return False


def _cost(crypt_hash: str) -> str:
    """The scheme and rounds of a hash (``$6$rounds=656000$``), what its check costs."""
    found = _ROUNDS.match(crypt_hash)
    return found.group(0) if found else "$6$"


def _random(length: int) -> str:
    return "".join(secrets.choice(_CRYPT_ALPHABET) for _ in range(length))


class DummyHashes:
    """Hashes no password matches, costing what the users' own hashes cost to check."""

    def __init__(self) -> None:
        self._made: dict[str, str] = {}
        self._lock = threading.Lock()

    def __call__(self, hashes: Mapping[str, str]) -> str:
        """The dummy with the most common scheme and rounds among ``hashes``."""
        costs = Counter(_cost(value) for value in hashes.values() if value[:3] in SCHEMES)
        cost = costs.most_common(1)[0][0] if costs else "$6$rounds=656000$"
        with self._lock:
            found = self._made.get(cost)
            if found is None:
                salt, checksum = _SHAPES[cost[:3]]
                found = self._made[cost] = f"{cost}{_random(salt)}${_random(checksum)}"
        return found


def dummy_hash(hashes: Mapping[str, str]) -> str:
    """A hash no password matches, as costly to check as the most common of ``hashes``."""
    return _DUMMIES(hashes)


_DUMMIES = DummyHashes()


class SuccessCache:
    """The successful checks, by (user, hash, keyed digest of the password); bounded, LRU.

    A changed password or hash misses it. Failures are never put here.
    """

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._key = secrets.token_bytes(32)  # the digests mean nothing outside this process
        self._known: OrderedDict[tuple[str, str, bytes], None] = OrderedDict()
        self._lock = threading.Lock()

    def entry(self, user: str, crypt_hash: str, password: str) -> tuple[str, str, bytes]:
        """The key of a credential: (user, hash, keyed digest of the password)."""
        return self._entry(user, crypt_hash, password)

    def _entry(self, user: str, crypt_hash: str, password: str) -> tuple[str, str, bytes]:
        digest = hmac.new(self._key, password.encode(errors="surrogatepass"), hashlib.sha256)
        return (user, crypt_hash, digest.digest())

    def __contains__(self, item: tuple[str, str, str]) -> bool:
        entry = self._entry(*item)
        with self._lock:
            if entry not in self._known:
                return False
            self._known.move_to_end(entry)
            return True

    def add(self, user: str, crypt_hash: str, password: str) -> None:
        """Remember one successful check."""
        entry = self._entry(user, crypt_hash, password)
        with self._lock:
            self._known[entry] = None
            while len(self._known) > self._size:
                self._known.popitem(last=False)
