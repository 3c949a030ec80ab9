"""The console's client of the C-PS: RESTCONF (RFC 8040) as the logged-in operator.

Every page reads and acts through this client with the operator's own credentials, so the
C-PS's validation and access control (RFC 8341) apply to the console user exactly as to any
other client. :class:`Cps` is the seam: the RESTCONF client here, or the SDK's
``Controller`` behind an adapter, satisfies it (the names follow the SDK: ``read_members``,
``invoke_members``). Event streams (RFC 8040 6.3, 6.4) are read as server-sent events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import requests

from controller.types import Json

YANG_JSON = "application/yang-data+json"
UNAUTHORIZED = 401
NOT_FOUND = 404
OK_MAX = 299


class CpsError(Exception):
    """A refusal of the C-PS (its ``ietf-restconf:errors``) or an unreachable C-PS (status 0)."""

    def __init__(self, status: int, tag: str, message: str, path: str | None = None) -> None:
        super().__init__(status, tag, message, path)
        self.status = status
        self.tag = tag
        self.message = message
        self.path = path

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"{self.status} {self.tag}: {self.message}{where}"


@dataclass(frozen=True, slots=True)
class Event:
    """One notification of a stream: its time, its name (``module:name``) and members; or the
    end of a replay (``replay_complete``)."""

    time: str
    name: str
    body: Json
    replay_complete: bool = False


class Events(Protocol):
    """A subscription: iterate for events; :meth:`close` ends it (from any thread)."""

    def __iter__(self) -> Iterator[Event]:
        """The events as they come."""
        ...

    def close(self) -> None:
        """End the subscription."""
        ...


class Cps(Protocol):
    """What the console needs of the C-PS."""

    def check_login(self) -> None:
        """Raise :class:`CpsError` (401) unless the C-PS accepts the credentials."""
        ...

    def close(self) -> None:
        """Close the connections."""
        ...

    def read_members(self, path: str, **params: str) -> Json:
        """The JSON of a data resource (``{}`` when absent or not readable)."""
        ...

    def invoke_members(self, module: str, operation: str, members: Json) -> Json:
        """Invoke an RPC; its output members."""
        ...

    def events(
        self,
        *,
        start_time: datetime | None = None,
        stop_time: datetime | None = None,
        xpath_filter: str | None = None,
    ) -> Events:
        """Subscribe to the NETCONF stream (replayed from ``start_time``, ending at
        ``stop_time``, filtered by an XPath)."""
        ...


#: Makes a client of the C-PS for a user and password (the seam a test fakes).
Connect = Callable[[str, str], Cps]


def _errors(reply: requests.Response) -> CpsError:
    try:
        first = reply.json()["ietf-restconf:errors"]["error"][0]
        return CpsError(
            reply.status_code,
            str(first.get("error-tag", "error")),
            str(first.get("error-message", "")),
            first.get("error-path"),
        )
    except (ValueError, KeyError, IndexError, TypeError):
        return CpsError(reply.status_code, "error", reply.text.strip()[:200])


def _time(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class RestconfCps:
    """The C-PS's RESTCONF at ``root`` (``http://127.0.0.1:8080/restconf``), as one user."""

    def __init__(
        self, root: str, user: str, password: str, *, verify: bool | str = True, timeout: float = 30
    ) -> None:
        self._root = root.rstrip("/")
        self._timeout = timeout
        self._session = requests.Session()
        self._session.auth = (user, password)
        self._verify = verify  # per request: a session's verify loses to REQUESTS_CA_BUNDLE

    def close(self) -> None:
        """Close the connections."""
        self._session.close()

    def _send(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        try:
            reply = self._session.request(
                method,
                f"{self._root}/{path}",
                timeout=self._timeout,
                verify=self._verify,
                **kwargs,
            )
        except requests.RequestException as exc:
            raise CpsError(0, "unreachable", f"{self._root}: {type(exc).__name__}") from exc
        if reply.status_code > OK_MAX:
            raise _errors(reply)
        return reply

    def check_login(self) -> None:
        """Raise :class:`CpsError` (401) unless the C-PS accepts the credentials."""
        self._send("GET", "yang-library-version", headers={"Accept": YANG_JSON})

    def read_members(self, path: str, **params: str) -> Json:
        """GET ``data/PATH``; ``{}`` for 404 (absent, or not readable by this user)."""
        try:
            reply = self._send(
                "GET", f"data/{path}", params=params or None, headers={"Accept": YANG_JSON}
            )
        except CpsError as exc:
            if exc.status == NOT_FOUND:
                return {}
            raise
        found: Json = reply.json() if reply.content.strip() else {}
        return found

    def invoke_members(self, module: str, operation: str, members: Json) -> Json:
        """POST ``operations/MODULE:OPERATION``; the output members (``{}`` for 204)."""
        reply = self._send(
            "POST",
            f"operations/{module}:{operation}",
            data=json.dumps({f"{module}:input": members}),
            headers={"Content-Type": YANG_JSON, "Accept": YANG_JSON},
        )
        if not reply.content.strip():
            return {}
        output: Json = reply.json().get(f"{module}:output", {})
        return output

    def events(
        self,
        *,
        start_time: datetime | None = None,
        stop_time: datetime | None = None,
        xpath_filter: str | None = None,
    ) -> Events:
        """GET ``streams/json/NETCONF`` as server-sent events (RFC 8040 6.3)."""
        params = {
            "start-time": _time(start_time) if start_time else None,
            "stop-time": _time(stop_time) if stop_time else None,
            "filter": xpath_filter,
        }
        reply = self._send(
            "GET",
            "streams/json/NETCONF",
            params={k: v for k, v in params.items() if v is not None},
            headers={"Accept": "text/event-stream"},
            stream=True,
        )
        return SseEvents(reply)


class SseEvents:
    """The events of one RESTCONF stream reply (W3C server-sent events framing)."""

    def __init__(self, reply: requests.Response) -> None:
        self._reply = reply

    def __iter__(self) -> Iterator[Event]:
        data: list[str] = []
        kind = ""
        try:
            for raw in self._reply.iter_lines(decode_unicode=True):
                line = raw if isinstance(raw, str) else raw.decode()
                if line:
                    field, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if field == "data":
                        data.append(value)
                    elif field == "event":
                        kind = value
                    continue
                if kind == "replay-complete":
                    yield Event("", "", {}, replay_complete=True)
                elif data:
                    yield parse_event("\n".join(data))
                data, kind = [], ""
        except (requests.RequestException, AttributeError, ValueError):
            return  # closed under the reader (close() from another thread), or cut off

    def close(self) -> None:
        """Close the connection (unblocks a reader)."""
        self._reply.close()


def parse_event(data: str) -> Event:
    """An event from the JSON ``data`` of an RFC 8040 6.4 notification."""
    document = json.loads(data).get("ietf-restconf:notification", {})
    time = str(document.pop("eventTime", ""))
    name, body = next(iter(document.items()), ("", {}))
    return Event(time, str(name), body if isinstance(body, dict) else {})
