"""Dispatcher and Failure Handler on the client-facing interface (sci-implementation 6, 8.1).

Every HTTP request to the CSCI-ID goes to one service instance: the affinity binding first
(6.2), else the load-balancing order of :mod:`agents.sci.policy`. A request the instance
refuses with 503 or cannot take (connection failure) is retried on the next instance; when
nothing can serve, the client gets the configured status (503). Responses never reveal the
instance (8.1): hop-by-hop and identifying headers are dropped and redirects made relative.

Session affinity: the configured cookie (the SCI sets an opaque random value when the client
has none) or header carries the session; a request with the header ``CATS-Session-End`` ends
the session after its response (explicit logout, 6.3).
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Any

import requests

from agents.common.http import HOP_BY_HOP, StartResponse, client_headers, read_body, respond
from agents.sci.config import InstanceConfig, SciConfig
from agents.sci.policy import Candidate, eligible, rank
from agents.sci.runtime import Runtime
from agents.sci.values import Health, Sample, SiId

LOG = logging.getLogger(__name__)
SESSION_END = "CATS-Session-End"
#: Response headers that would name the instance (8.1).
REVEALING = frozenset(
    {
        "server",
        "via",
        "x-instance-id",
        "x-served-by",
        "x-backend",
        "x-backend-server",
        "x-upstream",
        "x-powered-by",
        "date",
    }
)
MAX_BODY = 16 * 1024 * 1024
RETRYABLE_STATUS = 503
FIVE_TUPLE_ENV = {
    "source-address": "REMOTE_ADDR",
    "source-port": "REMOTE_PORT",
    "destination-address": "SERVER_NAME",
    "destination-port": "SERVER_PORT",
}


@dataclass(frozen=True, slots=True)
class ForwardSettings:
    """How requests reach the instances."""

    connect_timeout_s: float = 1.0
    read_timeout_s: float = 30.0
    attempts: int = 3


def flow_key(environ: dict[str, Any], fields: Iterable[str]) -> str:
    """The flow key of a request from the configured 5-tuple fields (6.2)."""
    parts = [
        "tcp" if name == "protocol" else str(environ.get(FIVE_TUPLE_ENV[name], ""))
        for name in fields
    ]
    return "flow:" + "|".join(parts)


def session_value(environ: dict[str, Any], config: SciConfig) -> str | None:
    """The session identifier carried by the configured cookie or header, if any."""
    affinity = config.affinity
    if affinity.session_header:
        env = "HTTP_" + affinity.session_header.upper().replace("-", "_")
        value: str | None = environ.get(env) or None
        return value
    if affinity.session_cookie:
        try:
            jar = SimpleCookie(environ.get("HTTP_COOKIE", ""))
        except CookieError:
            return None
        morsel = jar.get(affinity.session_cookie)
        return morsel.value if morsel is not None and morsel.value else None
    return None


def response_headers(headers: Iterable[tuple[str, str]], base_url: str) -> list[tuple[str, str]]:
    """The instance's headers without hop-by-hop and identifying ones; redirects relative."""
    kept = []
    for name, value in headers:
        lower = name.lower()
        if lower in HOP_BY_HOP or lower in REVEALING or lower == "content-encoding":
            continue
        if lower == "location" and value.startswith(base_url):
            kept.append((name, value[len(base_url) :] or "/"))
        else:
            kept.append((name, value))
    return kept


def permitted(source: str, prefixes: tuple[str, ...]) -> bool:
    """Whether a client address is within the permitted sources (9, Authentication)."""
    if not prefixes:
        return True
    try:
        address = ipaddress.ip_address(source)
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(prefix, strict=False) for prefix in prefixes)


class Dispatcher:
    """The WSGI application of the client-facing interface."""

    def __init__(self, runtime: Runtime, settings: ForwardSettings = ForwardSettings()) -> None:
        self._runtime = runtime
        self._config = runtime.config
        self._settings = settings
        self._local = threading.local()
        self._urls = {i.si_id: i.base_url(self._config.port) for i in self._config.instances}
        self._rate = (0, 0)  # (second, requests in it)
        self._rate_lock = threading.Lock()

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            self._local.session = session
        return session

    def _over_rate(self, now: float) -> bool:
        limit = self._config.max_request_rate
        if limit is None:
            return False
        with self._rate_lock:
            second, seen = self._rate
            seen = seen + 1 if int(now) == second else 1
            self._rate = (int(now), seen)
            return seen > limit

    def _reject(self, start_response: StartResponse, reason: str) -> list[bytes]:
        self._runtime.count("rejected")
        status = self._config.dispatch.reject_status
        body = f'{{"error": "service unavailable", "reason": "{reason}"}}'.encode()
        return respond(
            start_response, f"{status} Unavailable", body, headers=[("Retry-After", "1")]
        )

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        now = time.time()
        if not permitted(environ.get("REMOTE_ADDR", ""), self._config.permitted_sources):
            return respond(start_response, "403 Forbidden", b'{"error": "source not permitted"}')
        if self._over_rate(now):
            return self._reject(start_response, "request rate limit")
        try:
            body = read_body(environ, MAX_BODY)
        except ValueError as exc:
            return respond(start_response, "413 Payload Too Large", str(exc).encode(), "text/plain")
        return self._dispatch(environ, start_response, body, now)

    def _order(self, keys: tuple[str, ...], now: float) -> tuple[list[Candidate], SiId | None]:
        """Trial order: the healthy bound instance first, then the policy's ranking (6.1)."""
        runtime, sessions = self._runtime, self._runtime.sessions
        candidates = runtime.candidates(now)
        bound = sessions.lookup(keys, now) if keys else None
        by_id = {c.si_id: c for c in candidates}
        if bound is not None and by_id[bound].health in (Health.UNHEALTHY, Health.UNKNOWN):
            for key in keys:
                sessions.rebind(key)
            bound = None
        choice = eligible(
            candidates, degraded_last_resort=self._config.dispatch.degraded_last_resort
        )
        # A flow (not a session, whose state lives on its instance) leaves a DEGRADED instance
        # as soon as a HEALTHY one can take it: DEGRADED is a last resort (6.1).
        flow_only = not any(key.startswith("session:") for key in keys)
        degraded = bound is not None and by_id[bound].health is Health.DEGRADED
        if degraded and flow_only and not choice.degraded:
            for key in keys:
                sessions.rebind(key)
            bound = None
        order = rank(choice.candidates, self._config.dispatch.algorithm, runtime.turn())
        if bound is not None:
            order = [by_id[bound], *(c for c in order if c.si_id != bound)]
        return order, bound

    def _wait_for_instance(self, keys: tuple[str, ...]) -> tuple[list[Candidate], SiId | None]:
        """Queue the request until an instance can take it or queue-timeout-ms passes (6.1)."""
        self._runtime.count("queued")
        deadline = time.monotonic() + self._config.dispatch.queue_timeout_ms / 1000
        while time.monotonic() < deadline:
            time.sleep(0.01)
            order, bound = self._order(keys, time.time())
            if order:
                return order, bound
        self._runtime.count("queue-timeouts")
        return [], None

    def _dispatch(
        self, environ: dict[str, Any], start_response: StartResponse, body: bytes, now: float
    ) -> Iterable[bytes]:
        config = self._config
        value = session_value(environ, config)
        new_cookie = None
        if value is None and config.affinity.session_cookie:
            value = new_cookie = secrets.token_urlsafe(16)
        session_key = f"session:{value}" if value else None
        flow = flow_key(environ, config.affinity.flow_key) if config.affinity.flow_enabled else None
        keys = tuple(key for key in (session_key, flow) if key)
        order, bound = self._order(keys, now)
        if not order and config.dispatch.action == "queue":
            order, bound = self._wait_for_instance(keys)
        if not order:
            return self._reject(start_response, "no service instance available")
        in_session = session_key is not None and bound is not None
        for candidate in order[: self._settings.attempts]:
            reply = self._forward(candidate, environ, body, in_session=in_session)
            if reply is None:
                continue
            self._bind(keys, session_key, candidate.si_id, environ)
            headers = response_headers(reply.headers.items(), self._urls[candidate.si_id])
            if new_cookie and session_key and not _ends_session(environ):
                headers.append(
                    (
                        "Set-Cookie",
                        f"{config.affinity.session_cookie}={new_cookie}; Path=/; HttpOnly",
                    )
                )
            self._runtime.count(
                "dispatched-degraded" if candidate.health is Health.DEGRADED else "dispatched",
                candidate.si_id,
            )
            return respond(
                start_response,
                f"{reply.status_code} {reply.reason}",
                reply.content,
                reply.headers.get("Content-Type", "application/octet-stream"),
                headers=[h for h in headers if h[0].lower() != "content-type"],
            )
        return self._reject(start_response, "no service instance could take the request")

    def _bind(
        self, keys: tuple[str, ...], session_key: str | None, si_id: SiId, environ: dict[str, Any]
    ) -> None:
        now, sessions = time.time(), self._runtime.sessions
        if session_key and _ends_session(environ):
            sessions.end(session_key)
            keys = tuple(key for key in keys if key != session_key)
        for key in keys:
            sessions.bind(key, si_id, now, session=key == session_key)

    def _forward(
        self, candidate: Candidate, environ: dict[str, Any], body: bytes, *, in_session: bool
    ) -> requests.Response | None:
        """One attempt; None when the Failure Handler should try the next instance."""
        url = self._urls[candidate.si_id] + environ.get("PATH_INFO", "/")
        if environ.get("QUERY_STRING"):
            url += "?" + environ["QUERY_STRING"]
        runtime = self._runtime
        if not in_session:
            runtime.sessions.allocate(candidate.si_id)
        began = time.perf_counter()
        try:
            reply = self._session().request(
                environ.get("REQUEST_METHOD", "GET"),
                url,
                data=body or None,
                headers=client_headers(environ),
                timeout=(self._settings.connect_timeout_s, self._settings.read_timeout_s),
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            LOG.info("instance %s failed: %s", candidate.si_id, type(exc).__name__)
            runtime.record_sample(Sample(time.time(), candidate.si_id, 0.0, ok=False))
            return None
        finally:
            if not in_session:
                runtime.sessions.release(candidate.si_id)
        elapsed = (time.perf_counter() - began) * 1000
        ok = reply.status_code < 500  # noqa: PLR2004
        runtime.record_sample(Sample(time.time(), candidate.si_id, elapsed, ok=ok))
        return None if reply.status_code == RETRYABLE_STATUS else reply


def _ends_session(environ: dict[str, Any]) -> bool:
    """Whether the request carries ``CATS-Session-End`` (explicit logout, 6.3)."""
    return "HTTP_" + SESSION_END.upper().replace("-", "_") in environ


def instance_urls(instances: Iterable[InstanceConfig], port: int) -> dict[SiId, str]:
    """Forwarding base URL per instance."""
    return {i.si_id: i.base_url(port) for i in instances}
