"""Login and logout with the operator's own ietf-system credentials (RFC 7317).

The console checks the credentials by asking the C-PS (a RESTCONF request as that user), keeps
them in the server-side session (:mod:`.sessions`), and makes every RESTCONF call of that
session with them (:func:`cps`), so RFC 8341 access control applies to the console user as to
any client. The browser holds only the session id.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from flask import (
    Blueprint,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from werkzeug.wrappers import Response as BaseResponse

from controller.console.cps import UNAUTHORIZED, Connect, Cps, CpsError, RestconfCps
from controller.console.sessions import ServerSession
from controller.console.settings import ConsoleSettings

LOG = logging.getLogger("catsctl.console")
P = ParamSpec("P")
R = TypeVar("R")

blueprint = Blueprint("auth", __name__)


def settings() -> ConsoleSettings:
    """The settings of the running app."""
    found: ConsoleSettings = current_app.extensions["cats_console"]
    return found


def restconf(config: ConsoleSettings) -> Connect:
    """Clients of the C-PS's RESTCONF at ``config.cps_url``."""

    def connect(user: str, password: str) -> Cps:
        return RestconfCps(
            config.cps_url, user, password, verify=config.verify, timeout=config.timeout
        )

    return connect


def client_for(user: str, password: str) -> Cps:
    """A client of the C-PS as ``user``."""
    connect: Connect = current_app.extensions["cats_console_connect"]
    return connect(user, password)


def cps() -> Cps:
    """The C-PS as the logged-in user (one client per request)."""
    if "cps" not in g:
        g.cps = client_for(session["user"], session["password"])
    client: Cps = g.cps
    return client


def close_client(_: BaseException | None) -> None:
    """Close the request's client (teardown)."""
    client = g.pop("cps", None)
    if client is not None:
        client.close()


def _safe_next(target: str | None) -> str:
    """Only a path of this console (no scheme, no host): an open redirect otherwise."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return url_for("overview.index")


def login_required(view: Callable[P, R]) -> Callable[P, R | BaseResponse]:
    """Send a visitor without a session to the login page, then back."""

    @functools.wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R | BaseResponse:
        if "user" not in session:
            return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
        return view(*args, **kwargs)

    return wrapped


@blueprint.route("/login", methods=["GET", "POST"])
def login() -> str | tuple[str, int] | BaseResponse:
    """The login form; on POST, the C-PS decides whether the credentials are good."""
    target = _safe_next(request.values.get("next"))
    if request.method == "GET":
        return render_template("login.html", next=target, user="")
    user = request.form.get("username", "").strip()
    password = request.form.get("password", "")
    problem = None
    if not user or not password:
        problem = "enter a user name and a password"
    else:
        client = client_for(user, password)
        try:
            client.check_login()
        except CpsError as exc:
            problem = (
                "the C-PS did not accept this user name and password"
                if exc.status == UNAUTHORIZED
                else f"the C-PS could not be asked: {exc}"
            )
        finally:
            client.close()
    if problem is not None:
        LOG.info("console: login refused: user %s from %s", user, request.remote_addr)
        return render_template("login.html", next=target, user=user, problem=problem), 401
    assert isinstance(session, ServerSession)
    session.clear()
    session.regenerate()
    session["user"] = user
    session["password"] = password
    LOG.info("console: login: user %s from %s", user, request.remote_addr)
    return redirect(target)


@blueprint.route("/logout", methods=["POST"])
def logout() -> BaseResponse:
    """End the session (its contents are dropped from the store)."""
    LOG.info("console: logout: user %s", session.get("user"))
    assert isinstance(session, ServerSession)
    session.clear()
    session.regenerate()  # the old id is dropped from the store
    flash("You are logged out.")
    return redirect(url_for("auth.login"))
