"""Basic authentication: the header, the login, and a connection that proved itself."""

from __future__ import annotations

import base64

from controller.restconf.auth import Authenticator, ConnectionMemo, parse_basic


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


class Users:
    """Logins that record their attempts; ``admin:secret`` is good, a guess is throttled
    after the first failure."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, str, str]] = []
        self.good = {("admin", "secret")}
        self.failed = False

    def login(self, user: str, password: str, transport: str, source: str) -> str:
        self.attempts.append((user, transport, source))
        if (user, password) in self.good:
            return "ok"
        if self.failed:
            return "throttled"
        self.failed = True
        return "failed"

    def known_good(self, user: str, password: str) -> bool:
        return (user, password) in self.good

    def retry_after(self, user: str, source: str) -> float:
        return 4.0


def test_parse_basic() -> None:
    assert parse_basic(_basic("admin", "a:b")) == ("admin", "a:b")
    assert parse_basic("Bearer x") is None
    assert parse_basic("Basic !!!") is None
    assert parse_basic(None) is None


def test_a_connection_that_authenticated_is_not_checked_again() -> None:
    users = Users()
    auth = Authenticator(users.login, users.known_good, users.retry_after)
    memo = ConnectionMemo()
    header = _basic("admin", "secret")
    assert auth.authenticate(header, "192.0.2.1", memo).user == "admin"
    assert auth.authenticate(header, "192.0.2.1", memo).user == "admin"
    assert users.attempts == [("admin", "restconf", "192.0.2.1")]
    users.good.clear()  # the password was changed: the memo is no longer enough
    assert auth.authenticate(header, "192.0.2.1", memo).user is None
    assert len(users.attempts) == 2


def test_refusals_say_why() -> None:
    users = Users()
    auth = Authenticator(users.login, users.known_good, users.retry_after)
    assert auth.authenticate(None, "192.0.2.1").outcome == "failed"
    assert auth.authenticate(_basic("admin", "nope"), "192.0.2.1").outcome == "failed"
    throttled = auth.authenticate(_basic("admin", "nope"), "192.0.2.1")
    assert (throttled.user, throttled.outcome, throttled.retry_after) == (None, "throttled", 4.0)
