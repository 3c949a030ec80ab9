"""The console's application factory: ``create_app(settings)`` (Flask's pattern).

One blueprint per page group (:mod:`controller.console.views`), Jinja templates with
autoescape, CSRF protection on every form (Flask-WTF), server-side sessions
(:mod:`.sessions`), and headers that keep the browser to this console's own files
(Content-Security-Policy ``default-src 'self'``: no CDN, no inline script or style).
"""

from __future__ import annotations

import secrets

from flask import Flask, Response, flash, redirect, render_template, session, url_for
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.wrappers import Response as BaseResponse

from controller.console import auth
from controller.console.cps import UNAUTHORIZED, Connect, CpsError
from controller.console.sessions import ServerSessions, SessionStore
from controller.console.settings import ConsoleSettings
from controller.console.views import config, decisions, live, overview, plots, tables

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # only to itself: over HTTPS, Flask-WTF refuses a form whose Referer is not this console
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        if name == "Cache-Control" and response.mimetype in ("text/css", "text/javascript"):
            continue
        response.headers.setdefault(name, value)
    return response


def _refused(error: CpsError) -> tuple[str, int] | BaseResponse:
    """A refusal of the C-PS as a page: what was refused, and where (its error-path). A 401
    (the password changed, the user was deleted) ends the session."""
    if error.status == UNAUTHORIZED:
        session.clear()
        flash("The C-PS no longer accepts your login: log in again.")
        return redirect(url_for("auth.login"))
    status = error.status if 400 <= error.status < 600 else 502  # noqa: PLR2004
    return render_template("error.html", error=error), status


def _csrf(error: CSRFError) -> tuple[str, int]:
    problem = CpsError(400, "csrf", f"the form was refused: {error.description}; reload it")
    return render_template("error.html", error=problem), 400


def create_app(settings: ConsoleSettings, connect: Connect | None = None) -> Flask:
    """The console as a WSGI application; ``connect`` makes its clients of the C-PS
    (RESTCONF at ``settings.cps_url`` unless given)."""
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=settings.secret_key or secrets.token_hex(32),
        SESSION_COOKIE_SECURE=settings.secure_cookie,
        WTF_CSRF_TIME_LIMIT=None,  # the token lives as long as its (server-side) session
        MAX_CONTENT_LENGTH=64 * 1024,
        TEMPLATES_AUTO_RELOAD=False,
    )
    app.extensions["cats_console"] = settings
    app.extensions["cats_console_connect"] = connect or auth.restconf(settings)
    app.session_interface = ServerSessions(SessionStore(settings.idle_timeout))
    CSRFProtect(app)
    app.jinja_env.autoescape = True  # every template, whatever its name
    for blueprint in (
        auth.blueprint,
        overview.blueprint,
        tables.blueprint,
        decisions.blueprint,
        plots.blueprint,
        config.blueprint,
        live.blueprint,
    ):
        app.register_blueprint(blueprint)
    app.after_request(_headers)
    app.teardown_request(auth.close_client)
    app.register_error_handler(CpsError, _refused)
    app.register_error_handler(CSRFError, _csrf)
    return app
