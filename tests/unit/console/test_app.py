"""The console's application with the flask test client, a fake C-PS at the client seam:
login and logout, server-side sessions, CSRF on every form, escaping, refusals, rollback."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from controller.console.app import create_app
from controller.console.cps import Cps, CpsError
from controller.console.settings import ConsoleSettings
from controller.types import Json
from tests.unit.console.fake import FakeCps

SM = "ietf-cats-service-metrics"
ADMIN = "cats-controller-admin"
USERS = {"alice": "alice-secret", "olga": "olga-secret"}
COMMITS = {
    f"{ADMIN}:commits": {
        "commit": [
            {"id": "7", "time": "2026-12-02T03:29:12.5+00:00", "user": "alice", "edits": 1},
            {"id": "6", "time": "2026-12-02T03:20:00+00:00", "user": "system", "edits": 3},
        ]
    }
}
CST = {
    f"{SM}:computing-service-table": {
        "entry": [
            {"cs-id": "<script>x</script>", "csci-id": "1.2.3.4:80", "gas": 10, "age": "1500"},
            {
                "cs-id": "ARS",
                "csci-id": "5.6.7.8:80",
                "gas": 600,
                "computing-time": "6",
                "age": "300",
                "confidence": "ietf-cats-types:estimated",
                "aged-out": True,
            },
        ]
    }
}
DIFF = '--- a\n+++ b\n@@ -1 +1 @@\n-  "max-price": 50\n+  "max-price": 8\n'


def _rollback(user: str, members: Json) -> Json:
    if user == "olga":  # an observer: the C-PS's access control refuses the operation
        raise CpsError(403, "access-denied", "access denied", "/cats-controller-admin:rollback")
    result: Json = {"changes": 1, "unified-diff": DIFF}
    if "dry-run" not in members:
        result["commit-id"] = "8"
    return result


@pytest.fixture
def made() -> list[FakeCps]:
    """Every client the console made, in order."""
    return []


@pytest.fixture
def app(made: list[FakeCps]) -> Flask:
    """The console on a fake C-PS."""

    def connect(user: str, password: str) -> Cps:
        data = {f"{ADMIN}:commits": COMMITS, f"{SM}:computing-service-table": CST}
        client = FakeCps(user, password, USERS, data, {f"{ADMIN}:rollback": _rollback})
        made.append(client)
        return client

    flask_app = create_app(ConsoleSettings("http://cps.invalid/restconf"), connect)
    flask_app.config["TESTING"] = True
    return flask_app


@pytest.fixture
def client(app: Flask) -> Iterator[FlaskClient]:
    with app.test_client() as browser:
        yield browser


def _token(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def _login(client: FlaskClient, user: str = "alice") -> None:
    page = client.get("/login").get_data(as_text=True)
    reply = client.post(
        "/login",
        data={"csrf_token": _token(page), "username": user, "password": USERS[user]},
    )
    assert reply.status_code == 302


def test_pages_need_a_login(client: FlaskClient) -> None:
    reply = client.get("/cst?sort=gas")
    assert reply.status_code == 302
    assert reply.headers["Location"].startswith("/login?next=/cst")


def test_a_wrong_password_is_refused_by_the_cps(client: FlaskClient) -> None:
    page = client.get("/login").get_data(as_text=True)
    reply = client.post(
        "/login", data={"csrf_token": _token(page), "username": "alice", "password": "nope"}
    )
    assert reply.status_code == 401
    assert "did not accept" in reply.get_data(as_text=True)
    assert client.get("/cst").status_code == 302


def test_the_browser_holds_only_the_session_id(client: FlaskClient, made: list[FakeCps]) -> None:
    _login(client)
    cookie = client.get_cookie("cats_console")
    assert cookie is not None
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", cookie.value)
    assert cookie.http_only
    assert cookie.same_site == "Strict"
    assert client.get("/cst").status_code == 200
    assert made[-1].user == "alice"  # every call as the logged-in user
    assert made[-1].password == USERS["alice"]


def test_a_login_gets_a_new_session_id(client: FlaskClient) -> None:
    client.get("/login")
    before = client.get_cookie("cats_console")
    _login(client)
    after = client.get_cookie("cats_console")
    assert before is not None
    assert after is not None
    assert before.value != after.value


def test_every_form_needs_its_csrf_token(client: FlaskClient) -> None:
    _login(client)
    reply = client.post("/config/rollback", data={"to": "6", "latest": "7"})
    assert reply.status_code == 400
    assert "csrf" in reply.get_data(as_text=True)
    assert client.post("/logout").status_code == 400
    page = client.get("/login").get_data(as_text=True)
    login = client.post("/login", data={"username": "alice", "password": USERS["alice"]})
    assert login.status_code == 400
    assert 'name="csrf_token"' in page


def test_values_are_escaped_and_marked(client: FlaskClient) -> None:
    _login(client)
    page = client.get("/cst").get_data(as_text=True)
    assert "<script>x</script>" not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page
    assert 'class="stale estimated"' in page  # aged out, Computing Time estimated
    assert 'data-age-ms="1500"' in page


def test_headers_keep_the_browser_to_the_console(client: FlaskClient) -> None:
    reply = client.get("/login")
    policy = reply.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy
    assert reply.headers["X-Frame-Options"] == "DENY"


def test_login_never_redirects_elsewhere(client: FlaskClient) -> None:
    page = client.get("/login?next=//evil.example/x").get_data(as_text=True)
    reply = client.post(
        "/login",
        data={
            "csrf_token": _token(page),
            "username": "alice",
            "password": USERS["alice"],
            "next": "//evil.example/x",
        },
    )
    assert reply.headers["Location"] == "/"


def test_rollback_shows_its_diff_then_applies_it(client: FlaskClient, made: list[FakeCps]) -> None:
    _login(client)
    preview = client.get("/config/rollback?to=6").get_data(as_text=True)
    assert "will apply 1 change(s)" in preview
    assert '<span class="add">+  &#34;max-price&#34;: 8</span>' in preview
    assert 'name="latest" value="7"' in preview
    assert made[-1].calls[-1][2] == {"commit-id": "6", "dry-run": [None]}
    done = client.post(
        "/config/rollback",
        data={"csrf_token": _token(preview), "to": "6", "latest": "7", "comment": "undo"},
    )
    assert "Committed as commit 8" in done.get_data(as_text=True)
    assert made[-1].calls[-1][2] == {"commit-id": "6", "comment": "undo"}


def test_a_rollback_previewed_before_another_commit_is_not_applied(
    client: FlaskClient, made: list[FakeCps]
) -> None:
    _login(client)
    preview = client.get("/config/rollback?to=6").get_data(as_text=True)
    reply = client.post(
        "/config/rollback", data={"csrf_token": _token(preview), "to": "6", "latest": "5"}
    )
    assert reply.status_code == 302
    assert reply.headers["Location"] == "/config/rollback?to=6"
    assert all("dry-run" in call[2] for c in made for call in c.calls)


def test_a_refusal_names_what_was_refused_and_where(client: FlaskClient) -> None:
    _login(client, "olga")
    reply = client.get("/config/rollback?to=6")
    page = reply.get_data(as_text=True)
    assert reply.status_code == 403
    assert "Refused by your access rules" in page
    assert "/cats-controller-admin:rollback" in page
    assert 'id="confirm"' not in page


def test_logout_drops_the_session(app: Flask, client: FlaskClient) -> None:
    _login(client)
    cookie = client.get_cookie("cats_console")
    assert cookie is not None
    page = client.get("/cst").get_data(as_text=True)
    assert client.post("/logout", data={"csrf_token": _token(page)}).status_code == 302
    with app.test_client() as other:  # the old id, replayed
        other.set_cookie("cats_console", cookie.value)
        assert other.get("/cst").status_code == 302
