"""Crypt hashes and the cached password check."""

from __future__ import annotations

from controller.auth import PasswordCheck, hash_password, verify


def test_hash_and_verify() -> None:
    hashed = hash_password("secret")
    assert hashed.startswith("$6$")
    assert verify("secret", hashed)
    assert not verify("wrong", hashed)
    assert not verify("secret", "$9$nonsense")
    assert not verify("secret", "$5$broken")


def test_password_check_caches_and_follows_changes() -> None:
    users = {"admin": hash_password("secret")}
    calls: list[int] = []

    def lookup() -> dict[str, str]:
        calls.append(1)
        return users

    check = PasswordCheck(lookup)
    assert check("admin", "secret")
    assert check("admin", "secret")
    assert not check("admin", "nope")
    assert not check("ghost", "secret")
    users["admin"] = hash_password("other")
    assert not check("admin", "secret")
    assert check("admin", "other")
    assert len(calls) == 6
