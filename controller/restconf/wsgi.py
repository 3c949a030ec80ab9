"""The WSGI application (PEP 3333): the thin layer around :class:`.resources.Restconf`.

It takes the raw request URI (the split of a resource path must happen before percent-decoding,
RFC 8040 3.5.3), authenticates, bounds the body, and turns a reply into a WSGI status, headers
and body. It reads the environ directly: every resource is served by one handler, so a web
framework's routing, request context and response objects would only add their cost, which
was a fifth of the server time of a small RPC (tools/bench/selection.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit
from wsgiref.types import StartResponse, WSGIEnvironment

from controller import audit
from controller.audit.context import comment_problem
from controller.datastore.api import Principal
from controller.errors import ErrorItem, ErrorType
from controller.observability.metrics import RESTCONF_LATENCY, RESTCONF_REQUESTS, status_class
from controller.restconf.auth import parse_basic
from controller.restconf.http import ANONYMOUS, HttpReply, HttpRequest
from controller.restconf.resources import Restconf

LOG = logging.getLogger(__name__)
UNAUTHENTICATED = frozenset({"/.well-known/host-meta"})
REALM = 'Basic realm="restconf", charset="UTF-8"'
#: The request headers that carry a write's commit comment and label into the commit history
#: (cats-controller-admin; README "Commit history").
COMMENT_HEADER = "cats-commit-comment"
LABEL_HEADER = "cats-commit-label"

#: Returns the authenticated user of an Authorization header, or None.
Authenticate = Callable[[str | None], str | None]
#: Returns the NACM groups of a user.
#: The principal of an authenticated user: (user, transport, source address) -> Principal.
PrincipalOf = Callable[[str, str, str], Principal]


def raw_target(environ: Mapping[str, Any]) -> tuple[str, str]:
    """The still percent-encoded path and query of the request."""
    uri = environ.get("REQUEST_URI") or environ.get("RAW_URI")
    if not uri:
        return str(environ.get("PATH_INFO", "/")), str(environ.get("QUERY_STRING", ""))
    parts = urlsplit(str(uri))
    return parts.path or "/", parts.query


def request_headers(environ: Mapping[str, Any]) -> dict[str, str]:
    """The request headers by lower-case name (PEP 3333: ``HTTP_*``, ``CONTENT_*``)."""
    headers = {
        key[5:].replace("_", "-").lower(): str(value)
        for key, value in environ.items()
        if key.startswith("HTTP_")
    }
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(key):
            headers[key.replace("_", "-").lower()] = str(environ[key])
    return headers


def content_length(environ: Mapping[str, Any]) -> int | None:
    """The declared body length, None when absent or not a length."""
    value = str(environ.get("CONTENT_LENGTH") or "").strip()
    return int(value) if value.isdigit() else None


def read_body(environ: Mapping[str, Any], limit: int) -> bytes | None:
    """The request body, or None when it exceeds ``limit`` bytes.

    Without a length the body is read only when the server marks it terminated (chunked
    transfer coding, PEP 3333 amendment ``wsgi.input_terminated``), as a framework would.
    """
    stream = environ["wsgi.input"]
    length = content_length(environ)
    if length is not None:
        return None if length > limit else bytes(stream.read(length))
    if not environ.get("wsgi.input_terminated"):
        return b""
    data = bytes(stream.read(limit + 1))
    return None if len(data) > limit else data


def status_line(status: int) -> str:
    """``200 OK``."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


def _with(reply: HttpReply, name: str, value: str) -> HttpReply:
    return replace(reply, headers=(*reply.headers, (name, value)))


class RestconfApp:
    """The WSGI application serving every RESTCONF resource."""

    def __init__(
        self,
        restconf: Restconf,
        authenticate: Authenticate,
        principal_of: PrincipalOf,
        *,
        max_body_size: int,
    ) -> None:
        self._restconf = restconf
        self._authenticate = authenticate
        self._principal_of = principal_of
        self._max_body_size = max_body_size

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        path, query = raw_target(environ)
        bare = HttpRequest(method, path, query, request_headers(environ))
        started = time.perf_counter()
        try:
            reply = self._answer(bare, environ)
        except Exception:  # the handlers never raise; authentication might
            LOG.exception("unexpected error on %s %s", method, path)
            item = ErrorItem(ErrorType.APPLICATION, "operation-failed", "internal error")
            reply = self._restconf.error_reply(bare, 500, (item,))
        resource = _resource(path)
        RESTCONF_LATENCY.labels(method, resource).observe(time.perf_counter() - started)
        RESTCONF_REQUESTS.labels(method, resource, status_class(reply.status)).inc()
        headers = list(reply.headers)
        if reply.stream is not None:
            start_response(status_line(reply.status), headers)
            return reply.stream
        headers.append(("Content-Length", str(len(reply.body))))
        start_response(status_line(reply.status), headers)
        return [] if method == "HEAD" else [reply.body]

    def _answer(self, bare: HttpRequest, environ: WSGIEnvironment) -> HttpReply:
        """Authenticate, read the body within its bound and let the resources answer."""
        public = bare.path in UNAUTHENTICATED
        source = str(environ.get("REMOTE_ADDR", ""))
        user = None if public else self._authenticate(bare.header("authorization"))
        if user is None and not public:
            _refused_login(bare.header("authorization"), source)
            item = ErrorItem(ErrorType.PROTOCOL, "access-denied", "authentication required")
            return _with(self._restconf.error_reply(bare, 401, (item,)), "WWW-Authenticate", REALM)
        body = read_body(environ, self._max_body_size)
        if body is None:
            limit = self._max_body_size
            item = ErrorItem(ErrorType.TRANSPORT, "too-big", f"the body exceeds {limit} bytes")
            return _with(self._restconf.error_reply(bare, 413, (item,)), "Connection", "close")
        principal = self._principal_of(user, "restconf", source) if user else ANONYMOUS
        comment, label = bare.header(COMMENT_HEADER), bare.header(LABEL_HEADER)
        problem = comment_problem(comment, label)
        if problem is not None:
            item = ErrorItem(ErrorType.PROTOCOL, "invalid-value", problem)
            return self._restconf.error_reply(bare, 400, (item,))
        info = audit.RequestInfo("restconf", source, None, bare.method, comment, label)
        with audit.request(info):
            return self._restconf.handle(replace(bare, body=body, principal=principal))


def _resource(path: str) -> str:
    """The kind of resource a request path names (a bounded metric label)."""
    parts = path.split("/")
    if len(parts) > 2 and parts[1] == "restconf" and parts[2] in _RESOURCES:  # noqa: PLR2004
        return parts[2]
    return "other"


_RESOURCES = frozenset({"data", "ds", "operations", "yang-library-version", "streams"})


def _refused_login(header: str | None, source: str) -> None:
    """Audit a request whose credentials did not authenticate (none given is no attempt)."""
    credentials = parse_basic(header)
    if credentials is not None:
        audit.login_failed(credentials[0], "restconf", source)


def create_app(
    restconf: Restconf,
    authenticate: Authenticate,
    principal_of: PrincipalOf,
    *,
    max_body_size: int,
) -> RestconfApp:
    """The WSGI application serving every RESTCONF resource."""
    return RestconfApp(restconf, authenticate, principal_of, max_body_size=max_body_size)
