"""Basic authentication against crypt hashes, with the verification cache."""

from __future__ import annotations

import base64

from controller.restconf.auth import Authenticator, hash_password, parse_basic, verify


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_parse_basic() -> None:
    assert parse_basic(_basic("admin", "a:b")) == ("admin", "a:b")
    assert parse_basic("Bearer x") is None
    assert parse_basic("Basic !!!") is None
    assert parse_basic(None) is None


def test_hash_and_verify() -> None:
    hashed = hash_password("secret")
    assert hashed.startswith("$6$")
    assert verify("secret", hashed)
    assert not verify("wrong", hashed)
    assert not verify("secret", "$9$nonsense")
    assert not verify("secret", "$5$broken")


def test_authenticator_caches_and_follows_changes() -> None:
    users = {"admin": hash_password("secret")}
    calls: list[int] = []

    def lookup() -> dict[str, str]:
        calls.append(1)
        return users

    auth = Authenticator(lookup)
    assert auth.authenticate(_basic("admin", "secret")) == "admin"
    assert auth.authenticate(_basic("admin", "secret")) == "admin"
    assert auth.authenticate(_basic("admin", "nope")) is None
    assert auth.authenticate(_basic("ghost", "secret")) is None
    users["admin"] = hash_password("other")
    assert auth.authenticate(_basic("admin", "secret")) is None
    assert auth.authenticate(_basic("admin", "other")) == "admin"
