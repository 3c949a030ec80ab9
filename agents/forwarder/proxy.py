"""The data plane: client HTTP requests in, forwarded to the selected SCI (or egress).

Request format (the CATS Traffic Classifier's attribution, agent draft 6.1):

- the service: the header ``CATS-Service-Id: <cs-id>``, or the path prefix
  ``/cats/<cs-id>/...`` (stripped before forwarding);
- optionally ``CATS-Session-Id``, ``CATS-Turn-Id`` and ``CATS-Step-Id`` (integers) for the
  steering rules of agent sessions.

The request goes where :meth:`Forwarding.steer` decides, over keep-alive connection pools
(one ``requests.Session`` per server thread); the answer comes back with ``CATS-CSCI-Id``
(service-metrics-op 6.2.3 step 7) and, for a rule, ``CATS-Commitment-Id``. Without a route
the client gets 503 with a JSON body saying why; an unreachable target 502 (and its flow is
released). An ingress forwarder that tunnels to an egress forwarder sends
``CATS-Egress-Forwarder`` (and ``CATS-CSCI-Id`` in normal steering): at an egress forwarder
such a request is delivered to that CSCI-ID, or to a local one (network-only).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from agents.common.http import HOP_BY_HOP, StartResponse, client_headers, read_body, respond
from agents.forwarder.config import DataPlane, Role
from agents.forwarder.forwarding import Forwarding, Ticket
from agents.forwarder.select import Route
from agents.forwarder.values import Request, locator
from controller.types import CsId, SessionId

LOG = logging.getLogger("agents.forwarder.data")
SERVICE, SESSION, TURN, STEP = "CATS-Service-Id", "CATS-Session-Id", "CATS-Turn-Id", "CATS-Step-Id"
CSCI, COMMITMENT, EGRESS = "CATS-CSCI-Id", "CATS-Commitment-Id", "CATS-Egress-Forwarder"
PREFIX = "/cats/"
#: Response headers the forwarder's own server sets (or that are re-encoded).
REPLACED = frozenset({"content-type", "content-encoding", "date", "server"})
MAX_BODY = 16 * 1024 * 1024


def _env(name: str) -> str:
    return "HTTP_" + name.upper().replace("-", "_")


class BadRequestError(ValueError):
    """A request the data plane cannot classify."""


@dataclass(frozen=True, slots=True)
class Classified:
    """A request's attribution and the path to forward."""

    request: Request
    path: str


def _number(environ: dict[str, Any], name: str) -> int | None:
    raw = environ.get(_env(name))
    if raw is None:
        return None
    if not raw.isdigit() or int(raw) >= 2**32:
        raise BadRequestError(f"{name} must be an integer 0..4294967295, got {raw!r}")
    return int(raw)


def classify(environ: dict[str, Any]) -> Classified:
    """The attribution of a request (raises BadRequestError without a service)."""
    path = environ.get("PATH_INFO", "/") or "/"
    cs_id = environ.get(_env(SERVICE))
    if not cs_id and path.startswith(PREFIX):
        cs_id, _, rest = path[len(PREFIX) :].partition("/")
        path = "/" + rest
    if not cs_id:
        raise BadRequestError(f"name the service: a {SERVICE} header or a path /cats/<cs-id>/...")
    session = environ.get(_env(SESSION)) or None
    request = Request(
        CsId(cs_id),
        SessionId(session) if session else None,
        _number(environ, TURN),
        _number(environ, STEP),
        environ.get("REMOTE_ADDR", ""),
        int(environ.get("REMOTE_PORT") or 0),
        environ.get("SERVER_NAME", ""),
        int(environ.get("SERVER_PORT") or 0),
    )
    return Classified(request, path)


def _json(start_response: StartResponse, status: str, **body: object) -> list[bytes]:
    return respond(start_response, status, json.dumps(body).encode())


class DataPlaneApp:
    """The WSGI application of the forwarder's data-plane port."""

    def __init__(self, forwarding: Forwarding, settings: DataPlane, roles: frozenset[Role]) -> None:
        self._forwarding, self._settings, self._roles = forwarding, settings, roles
        self._local = threading.local()

    def _session(self) -> requests.Session:
        """This thread's keep-alive connection pool."""
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.trust_env = False
            adapter = HTTPAdapter(pool_connections=16, pool_maxsize=16, max_retries=0)
            session.mount("http://", adapter)
            self._local.session = session
        return session

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            classified = classify(environ)
            body = read_body(environ, MAX_BODY)
        except BadRequestError as exc:
            return _json(start_response, "400 Bad Request", error=str(exc))
        except ValueError as exc:
            return _json(start_response, "413 Content Too Large", error=str(exc))
        if _env(EGRESS) in environ:
            return self._deliver(environ, start_response, classified, body)
        if Role.INGRESS not in self._roles:
            return _json(start_response, "403 Forbidden", error="not an ingress forwarder")
        ticket = self._forwarding.steer(classified.request, time.time())
        return self._forward(environ, start_response, classified, body, ticket)

    def _deliver(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        classified: Classified,
        body: bytes,
    ) -> Iterable[bytes]:
        """At the egress: decapsulate and deliver to the CSCI-ID, or a local one (6.2.5)."""
        if Role.EGRESS not in self._roles:
            return _json(start_response, "403 Forbidden", error="not an egress forwarder")
        csci = environ.get(_env(CSCI))
        if csci:
            found = locator(csci)
            chosen = Route(found.base_url if found else None, csci, reason="no locator")
        else:
            chosen = self._forwarding.local_route(classified.request.cs_id, time.time())
        ticket = Ticket(0, None, chosen, (), classified.request, time.monotonic())
        return self._forward(environ, start_response, classified, body, ticket)

    def _forward(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        classified: Classified,
        body: bytes,
        ticket: Ticket,
    ) -> Iterable[bytes]:
        chosen = ticket.route
        if chosen.base_url is None:
            self._forwarding.done(ticket, 0)
            return _json(
                start_response,
                "503 Service Unavailable",
                error="no route",
                reason=chosen.reason,
                **{"cs-id": classified.request.cs_id},
            )
        url = chosen.base_url + classified.path
        if environ.get("QUERY_STRING"):
            url += "?" + environ["QUERY_STRING"]
        headers = {k: v for k, v in client_headers(environ).items() if k.lower() != EGRESS.lower()}
        if chosen.egress is not None:
            headers.update({EGRESS: chosen.egress, SERVICE: classified.request.cs_id})
            if chosen.csci_id is not None:
                headers[CSCI] = chosen.csci_id
        else:
            headers.pop(CSCI.title(), None)
        try:
            reply = self._session().request(
                environ.get("REQUEST_METHOD", "GET"),
                url,
                data=body or None,
                headers=headers,
                timeout=(self._settings.connect_timeout, self._settings.read_timeout),
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            LOG.info("target %s failed: %s", chosen.base_url, type(exc).__name__)
            self._forwarding.done(ticket, len(body), failed=True)
            status = (
                "504 Gateway Timeout" if isinstance(exc, requests.Timeout) else "502 Bad Gateway"
            )
            return _json(start_response, status, error="target unreachable", target=chosen.csci_id)
        self._forwarding.done(ticket, len(body) + len(reply.content))
        kept = [
            (name, value)
            for name, value in reply.headers.items()
            if name.lower() not in HOP_BY_HOP and name.lower() not in REPLACED
        ]
        reply_csci = reply.headers.get(CSCI)
        if chosen.csci_id is not None and reply_csci is None:
            kept.append((CSCI, chosen.csci_id))
        if ticket.commitment_id is not None:
            kept.append((COMMITMENT, ticket.commitment_id))
        return respond(
            start_response,
            f"{reply.status_code} {reply.reason}",
            reply.content,
            reply.headers.get("Content-Type", "application/octet-stream"),
            headers=kept,
        )
