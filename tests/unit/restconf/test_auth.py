"""Basic authentication: the header, then the shared password check."""

from __future__ import annotations

import base64

from controller.auth import PasswordCheck, hash_password
from controller.restconf.auth import Authenticator, parse_basic


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_parse_basic() -> None:
    assert parse_basic(_basic("admin", "a:b")) == ("admin", "a:b")
    assert parse_basic("Bearer x") is None
    assert parse_basic("Basic !!!") is None
    assert parse_basic(None) is None


def test_authenticator_caches_and_follows_changes() -> None:
    users = {"admin": hash_password("secret")}
    auth = Authenticator(PasswordCheck(lambda: users))
    assert auth.authenticate(_basic("admin", "secret")) == "admin"
    assert auth.authenticate(_basic("admin", "secret")) == "admin"
    assert auth.authenticate(_basic("admin", "nope")) is None
    assert auth.authenticate(_basic("ghost", "secret")) is None
    users["admin"] = hash_password("other")
    assert auth.authenticate(_basic("admin", "secret")) is None
    assert auth.authenticate(_basic("admin", "other")) == "admin"
