"""The flask application: the thin WSGI layer around :class:`.resources.Restconf`.

It takes the raw request URI (the split of a resource path must happen before percent-decoding,
RFC 8040 3.5.3), authenticates, bounds the body, and copies a reply onto a response.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, request

from controller.datastore.api import Principal
from controller.errors import ErrorItem, ErrorType
from controller.restconf.http import HttpReply, HttpRequest
from controller.restconf.resources import Restconf

METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
UNAUTHENTICATED = frozenset({"/.well-known/host-meta"})
REALM = 'Basic realm="restconf", charset="UTF-8"'

#: Returns the authenticated user of an Authorization header, or None.
Authenticate = Callable[[str | None], str | None]
#: Returns the NACM groups of a user.
GroupsOf = Callable[[str], tuple[str, ...]]


def raw_target(environ: Mapping[str, Any]) -> tuple[str, str]:
    """The still percent-encoded path and query of the request."""
    uri = environ.get("REQUEST_URI") or environ.get("RAW_URI")
    if not uri:
        return str(environ.get("PATH_INFO", "/")), str(environ.get("QUERY_STRING", ""))
    parts = urlsplit(str(uri))
    return parts.path or "/", parts.query


def _reply(reply: HttpReply) -> Response:
    if reply.stream is not None:
        response = Response(reply.stream, status=reply.status, direct_passthrough=True)
    else:
        response = Response(reply.body, status=reply.status)
    response.headers.clear()
    for name, value in reply.headers:
        response.headers.add(name, value)
    if reply.stream is None:
        response.headers["Content-Length"] = str(len(reply.body))
    return response


def create_app(
    restconf: Restconf,
    authenticate: Authenticate,
    groups_of: GroupsOf,
    *,
    max_body_size: int,
) -> Flask:
    """The WSGI application serving every RESTCONF resource."""
    app = Flask("controller.restconf")

    def dispatch(**_: str) -> Response:
        path, query = raw_target(request.environ)
        headers = {name.lower(): value for name, value in request.headers.items()}
        method = request.method
        bare = HttpRequest(method, path, query, headers)
        user = None if path in UNAUTHENTICATED else authenticate(headers.get("authorization"))
        if user is None and path not in UNAUTHENTICATED:
            item = ErrorItem(ErrorType.PROTOCOL, "access-denied", "authentication required")
            reply = restconf.error_reply(bare, 401, (item,))
            return _with(_reply(reply), "WWW-Authenticate", REALM)
        length = request.content_length
        if length is not None and length > max_body_size:
            item = ErrorItem(
                ErrorType.TRANSPORT, "too-big", f"the body exceeds {max_body_size} bytes"
            )
            return _with(_reply(restconf.error_reply(bare, 413, (item,))), "Connection", "close")
        body = request.stream.read(max_body_size + 1)
        if len(body) > max_body_size:
            item = ErrorItem(
                ErrorType.TRANSPORT, "too-big", f"the body exceeds {max_body_size} bytes"
            )
            return _with(_reply(restconf.error_reply(bare, 413, (item,))), "Connection", "close")
        principal = Principal(user or "anonymous", groups_of(user) if user else ())
        full = HttpRequest(method, path, query, headers, body, principal)
        return _reply(restconf.handle(full))

    app.add_url_rule("/", "root", dispatch, methods=METHODS, provide_automatic_options=False)
    app.add_url_rule(
        "/<path:rest>", "any", dispatch, methods=METHODS, provide_automatic_options=False
    )
    return app


def _with(response: Response, name: str, value: str) -> Response:
    response.headers[name] = value
    return response
