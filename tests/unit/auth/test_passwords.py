"""Crypt hashes, the dummy hash of unknown users and the cache of successful checks."""

from __future__ import annotations

from passlib.hash import md5_crypt, sha512_crypt

from controller.auth import SuccessCache, dummy_hash, hash_password, verify

CHEAP = sha512_crypt.using(rounds=1000)


def test_hash_and_verify() -> None:
    hashed = hash_password("secret")
    assert hashed.startswith("$6$rounds=")
    assert verify("secret", hashed)
    assert not verify("wrong", hashed)
    assert not verify("secret", "$9$nonsense")
    assert not verify("secret", "$5$broken")
    assert verify("s", md5_crypt.hash("s"))


def test_the_dummy_costs_what_the_users_hashes_cost_and_matches_nothing() -> None:
    users = {"a": CHEAP.hash("x"), "b": CHEAP.hash("y"), "c": md5_crypt.hash("z")}
    dummy = dummy_hash(users)
    assert dummy.startswith("$6$rounds=1000$")
    assert len(dummy) == len(users["a"])
    assert dummy_hash(users) == dummy  # made once per cost
    for guess in ("", "x", "y", "z", "password"):
        assert not verify(guess, dummy)
    assert dummy_hash({}).startswith("$6$rounds=656000$")  # passlib's default


def test_only_successes_are_cached_and_a_new_hash_misses() -> None:
    cache = SuccessCache(size=2)
    first = CHEAP.hash("pw")
    cache.add("admin", first, "pw")
    assert ("admin", first, "pw") in cache
    assert ("admin", first, "PW") not in cache
    assert ("admin", CHEAP.hash("pw"), "pw") not in cache  # the password was changed
    cache.add("b", first, "pw")
    cache.add("c", first, "pw")
    assert ("admin", first, "pw") not in cache  # least recently used, dropped
