"""The WSGI application (PEP 3333): the thin layer around :class:`.resources.Restconf`.

It takes the raw request URI (the split of a resource path must happen before percent-decoding,
RFC 8040 3.5.3), authenticates, bounds the body, and turns a reply into a WSGI status, headers
and body. It reads the environ directly: every resource is served by one handler, so a web
framework's routing, request context and response objects would only add their cost, which
was a fifth of the server time of a small RPC (tools/bench/selection.py).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit
from wsgiref.types import StartResponse, WSGIEnvironment

from controller import audit
from controller.audit.context import comment_problem
from controller.datastore.api import Principal
from controller.errors import ErrorItem, ErrorType
from controller.model.limits import DocumentLimits, LimitError, check_json_shape, check_xml
from controller.observability.metrics import RESTCONF_LATENCY, RESTCONF_REQUESTS, status_class
from controller.restconf.auth import Authenticated, ConnectionMemo
from controller.restconf.http import ANONYMOUS, HttpReply, HttpRequest
from controller.restconf.resources import Restconf

LOG = logging.getLogger(__name__)
UNAUTHENTICATED = frozenset({"/.well-known/host-meta"})
REALM = 'Basic realm="restconf", charset="UTF-8"'
#: The request headers that carry a write's commit comment and label into the commit history
#: (cats-controller-admin; README "Commit history").
COMMENT_HEADER = "cats-commit-comment"
LABEL_HEADER = "cats-commit-label"
DEFAULT_LIMITS = DocumentLimits()

#: Authenticates a request: (Authorization header, source address, the connection's memo).
Authenticate = Callable[[str | None, str, ConnectionMemo | None], Authenticated]
#: The principal of an authenticated user: (user, transport, source address) -> Principal.
PrincipalOf = Callable[[str, str, str], Principal]
#: The environ key of a connection's :class:`ConnectionMemo` (set by the server adapter).
CONNECTION_MEMO = "cats.connection_memo"
#: The environ key of the server's stream hand-off: called with a response's chunks after
#: ``start_response``, it sends the head and writes them on a thread of its own.
DETACH = "cats.detach"


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


def check_shape(body: bytes, content_type: str | None, limits: DocumentLimits) -> None:
    """Refuse a body past the bounds of its media type's shape, before anything parses it
    (RFC 8040 5.2: the bodies are JSON or XML)."""
    kind = (content_type or "").lower()
    if not body or not kind:
        return
    if "json" in kind:
        check_json_shape(body.decode("utf-8", errors="replace"), limits)
    elif "xml" in kind:
        check_xml(body, limits)


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
        limits: DocumentLimits = DEFAULT_LIMITS,
    ) -> None:
        self._restconf = restconf
        self._authenticate = authenticate
        self._principal_of = principal_of
        self._max_body_size = max_body_size
        self._limits = limits

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        path, query = raw_target(environ)
        bare = HttpRequest(method, path, query, request_headers(environ))
        started = time.perf_counter()
        try:
            reply = self._answer(bare, environ)
        except Exception:  # the handlers never raise; authentication might
            LOG.exception("unexpected error on %s %s", method, path)
            reply = self.failed(bare)
        self.count(bare, reply.status, started)
        headers = list(reply.headers)
        if reply.stream is not None:
            start_response(status_line(reply.status), headers)
            detach = environ.get(DETACH)
            if callable(detach):  # the stream is written off the worker threads
                detach(reply.stream)
                return []
            return reply.stream
        headers.append(("Content-Length", str(len(reply.body))))
        start_response(status_line(reply.status), headers)
        return [] if method == "HEAD" else [reply.body]

    def count(self, bare: HttpRequest, status: int, started: float) -> None:
        """The request in the RESTCONF metrics (latency from ``started``, perf_counter)."""
        resource = _resource(bare.path)
        RESTCONF_LATENCY.labels(bare.method, resource).observe(time.perf_counter() - started)
        RESTCONF_REQUESTS.labels(bare.method, resource, status_class(status)).inc()

    def _answer(self, bare: HttpRequest, environ: WSGIEnvironment) -> HttpReply:
        """Authenticate, read the body within its bound and let the resources answer."""
        source = str(environ.get("REMOTE_ADDR", ""))
        user = None
        if not is_public(bare):
            memo = environ.get(CONNECTION_MEMO)
            memo = memo if isinstance(memo, ConnectionMemo) else None
            authenticated = self.authenticate(bare, source, memo)
            if authenticated.user is None:
                return self.refused(bare, authenticated)
            user = authenticated.user
        body = self.body(bare, environ, source)
        if isinstance(body, HttpReply):
            return body
        return self.respond(bare, body, source, user)

    def authenticate(
        self, bare: HttpRequest, source: str, memo: ConnectionMemo | None
    ) -> Authenticated:
        """The user the request's credentials authenticate (``memo``: what its connection
        has proved), or why there is none."""
        return self._authenticate(bare.header("authorization"), source, memo)

    def principal(self, user: str, source: str) -> Principal:
        """The principal of an authenticated RESTCONF user."""
        return self._principal_of(user, "restconf", source)

    def failed(self, bare: HttpRequest) -> HttpReply:
        """500 ``operation-failed``, for what the handlers never raise (logged by the caller)."""
        item = ErrorItem(ErrorType.APPLICATION, "operation-failed", "internal error")
        return self._restconf.error_reply(bare, 500, (item,))

    def respond(self, bare: HttpRequest, body: bytes, source: str, user: str | None) -> HttpReply:
        """The resources' reply to an authenticated request (``user`` None: a public
        resource), with its commit comment and label and its audit context."""
        principal = self.principal(user, source) if user else ANONYMOUS
        with self.context(bare, source) as problem:
            if problem is not None:
                return problem
            return self._restconf.handle(replace(bare, body=body, principal=principal))

    @contextmanager
    def context(self, bare: HttpRequest, source: str) -> Iterator[HttpReply | None]:
        """The audit context of a request (its transport, source, commit comment and label),
        or the reply refusing a comment or label that is not one (yielded instead)."""
        comment, label = bare.header(COMMENT_HEADER), bare.header(LABEL_HEADER)
        problem = comment_problem(comment, label)
        if problem is not None:
            item = ErrorItem(ErrorType.PROTOCOL, "invalid-value", problem)
            yield self._restconf.error_reply(bare, 400, (item,))
            return
        info = audit.RequestInfo("restconf", source, None, bare.method, comment, label)
        with audit.request(info):
            yield None

    def body(self, bare: HttpRequest, environ: WSGIEnvironment, source: str) -> bytes | HttpReply:
        """The request body, or the reply refusing it: past its deadline (408), past its size
        (413) or past the bounds on its shape (413 too-big, 400 malformed)."""
        try:
            body = read_body(environ, self._max_body_size)
        except TimeoutError:  # the gate's body deadline (DeadlineSocketIO) passed
            LOG.info(
                "the body of %s %s from %s did not arrive in time", bare.method, bare.path, source
            )
            message = "the body did not arrive in time (catsctl serve --restconf-body-timeout)"
            item = ErrorItem(ErrorType.TRANSPORT, "operation-failed", message)
            return _with(self._restconf.error_reply(bare, 408, (item,)), "Connection", "close")
        if body is None:
            limit = self._max_body_size
            item = ErrorItem(ErrorType.TRANSPORT, "too-big", f"the body exceeds {limit} bytes")
            return _with(self._restconf.error_reply(bare, 413, (item,)), "Connection", "close")
        try:
            check_shape(body, bare.header("content-type"), self._limits)
        except LimitError as exc:
            if exc.too_big:
                item = ErrorItem(ErrorType.PROTOCOL, "too-big", f"the body has {exc}")
                return self._restconf.error_reply(bare, 413, (item,))
            item = ErrorItem(ErrorType.PROTOCOL, "malformed-message", f"the body has {exc}")
            return self._restconf.error_reply(bare, 400, (item,))
        return body

    def refused(self, bare: HttpRequest, authenticated: Authenticated) -> HttpReply:
        """401 for no or wrong credentials; 429 while the source or user is throttled after
        failures, 503 while every password check is busy (both with Retry-After)."""
        wait = str(max(1, math.ceil(authenticated.retry_after)))
        if authenticated.outcome == "throttled":
            message = "too many failed logins from this address or for this user; retry later"
            item = ErrorItem(ErrorType.PROTOCOL, "resource-denied", message)
            return _with(self._restconf.error_reply(bare, 429, (item,)), "Retry-After", wait)
        if authenticated.outcome == "busy":
            message = "too many logins are being checked; retry later"
            item = ErrorItem(ErrorType.PROTOCOL, "resource-denied", message)
            return _with(self._restconf.error_reply(bare, 503, (item,)), "Retry-After", wait)
        item = ErrorItem(ErrorType.PROTOCOL, "access-denied", "authentication required")
        return _with(self._restconf.error_reply(bare, 401, (item,)), "WWW-Authenticate", REALM)


def is_public(bare: HttpRequest) -> bool:
    """Whether a request's resource is served without authentication."""
    return bare.path in UNAUTHENTICATED


def _resource(path: str) -> str:
    """The kind of resource a request path names (a bounded metric label)."""
    parts = path.split("/")
    if len(parts) > 2 and parts[1] == "restconf" and parts[2] in _RESOURCES:  # noqa: PLR2004
        return parts[2]
    return "other"


_RESOURCES = frozenset({"data", "ds", "operations", "yang-library-version", "streams"})


def create_app(
    restconf: Restconf,
    authenticate: Authenticate,
    principal_of: PrincipalOf,
    *,
    max_body_size: int,
    limits: DocumentLimits = DEFAULT_LIMITS,
) -> RestconfApp:
    """The WSGI application serving every RESTCONF resource."""
    return RestconfApp(
        restconf, authenticate, principal_of, max_body_size=max_body_size, limits=limits
    )
