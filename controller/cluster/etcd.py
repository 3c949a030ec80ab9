"""etcd's v3 API over its gRPC gateway (``etcd3gw``), across a list of endpoints.

``etcd3gw`` talks to one member; :class:`Etcd` keeps a client per member and sends each
request to the one that answered last, moving on to the next when a member does not answer
(it is down, or it is cut off from the others and etcd's quorum read times out). A request
that no member answers raises :class:`Unavailable`. The watch stream is read here (not with
``etcd3gw``'s watcher, which ends silently when its member goes), so that a watch that breaks
is started again on another member from the revision after the last event it delivered,
unless etcd has compacted that revision away: then :class:`Compacted` ends the watch and the
caller reads what it missed another way (the watch would be refused again and again).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from etcd3gw import exceptions
from etcd3gw.client import Etcd3Client

LOG = logging.getLogger(__name__)
REQUEST_TIMEOUT_S = 5.0
API_PATH = "/v3/"  # etcd 3.4 serves /v3/ (and /v3beta/); no discovery round trip


class Unavailable(Exception):  # noqa: N818 - it names the state, as etcd does
    """No etcd member answered (the cluster has lost quorum, or every member is down)."""


class Compacted(Exception):  # noqa: N818 - it names etcd's answer
    """etcd no longer has the revision a watch asked to start from (it compacted its history
    up to ``revision``): the events before it are lost to watches."""

    def __init__(self, revision: int, reason: str = "") -> None:
        why = f" ({reason})" if reason else ""
        super().__init__(f"etcd compacted its history up to revision {revision}{why}")
        self.revision = revision


@dataclass(frozen=True, slots=True)
class KeyValue:
    """One key as etcd holds it."""

    key: str
    value: bytes
    mod_revision: int
    lease: int = 0


def endpoints_of(url: str) -> list[tuple[str, int]]:
    """The ``(host, port)`` pairs of ``etcd://HOST:PORT[,HOST:PORT...]``."""
    if not url.startswith("etcd://"):
        raise ValueError(f"{url!r} is not etcd://HOST:PORT[,HOST:PORT...]")
    found = []
    for item in url.removeprefix("etcd://").strip("/").split(","):
        parts = urlsplit(f"//{item}")
        if not parts.hostname or parts.port is None:
            raise ValueError(f"{item!r} in {url!r} is not HOST:PORT")
        found.append((parts.hostname, parts.port))
    return found


def encode(data: str | bytes) -> str:
    """Base64, as the gateway's JSON carries keys and values."""
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode()


_COMPARED = {"MOD": "mod_revision", "CREATE": "create_revision", "VERSION": "version"}


def equal(key: str, target: str, value: int) -> dict[str, Any]:
    """A transaction's comparison: ``key``'s ``target`` equals ``value`` (``MOD``, ``CREATE``:
    its last and first revisions, 0 when it does not exist; ``VERSION``: its count of puts)."""
    return {"key": encode(key), "target": target, "result": "EQUAL", _COMPARED[target]: str(value)}


def prefix_end(prefix: str) -> str:
    """The range end of every key starting with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def key_value(item: dict[str, Any]) -> KeyValue:
    """A key of a range reply or a watch event (base64 as the gateway gives it)."""
    return KeyValue(
        base64.b64decode(item["key"]).decode(),
        base64.b64decode(item.get("value", "")),
        int(item.get("mod_revision", 0)),
        int(item.get("lease", 0)),
    )


class Etcd:
    """Requests to whichever member answers."""

    def __init__(self, endpoints: Sequence[tuple[str, int]], timeout: float = REQUEST_TIMEOUT_S):
        if not endpoints:
            raise ValueError("no etcd endpoint")
        self.timeout = timeout
        self._clients = [
            Etcd3Client(host, port, timeout=timeout, api_path=API_PATH) for host, port in endpoints
        ]
        self._current = 0
        self._lock = threading.Lock()

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``/v3/path`` on the first member that answers."""
        with self._lock:
            start = self._current
        failures = []
        for offset in range(len(self._clients)):
            index = (start + offset) % len(self._clients)
            client = self._clients[index]
            try:
                reply: dict[str, Any] = client.post(client.get_url(path), json=body)
            except (exceptions.ConnectionFailedError, exceptions.ConnectionTimeoutError) as exc:
                failures.append(f"{client.host}:{client.port}: {type(exc).__name__}")
                continue
            except exceptions.Etcd3Exception as exc:  # etcd answered: no leader, timed out
                text = str(exc.detail_text if hasattr(exc, "detail_text") else exc)
                failures.append(f"{client.host}:{client.port}: {text[:200]}")
                continue
            with self._lock:
                self._current = index
            return reply
        raise Unavailable("no etcd member answered: " + "; ".join(failures))

    # ------------------------------------------------------------------ keys

    def get(self, key: str) -> KeyValue | None:
        """One key, or None."""
        reply = self.call("/kv/range", {"key": encode(key)})
        found = reply.get("kvs") or []
        return key_value(found[0]) if found else None

    def range_prefix(self, prefix: str, *, start: str | None = None) -> list[KeyValue]:
        """Every key under ``prefix`` (from ``start`` on), in key order."""
        body = {"key": encode(start or prefix), "range_end": encode(prefix_end(prefix))}
        reply = self.call("/kv/range", body)
        return [key_value(item) for item in reply.get("kvs") or []]

    def put(self, key: str, value: bytes, lease: int = 0) -> int:
        """Put a key; returns the revision it made."""
        body: dict[str, Any] = {"key": encode(key), "value": encode(value)}
        if lease:
            body["lease"] = lease
        return int(self.call("/kv/put", body)["header"]["revision"])

    def delete(self, key: str) -> None:
        """Delete a key."""
        self.call("/kv/deleterange", {"key": encode(key)})

    def compact(self, revision: int) -> None:
        """Drop etcd's history before ``revision`` (the keys as they are stay): a range or a
        watch from an older revision is refused from then on."""
        self.call("/kv/compaction", {"revision": str(revision), "physical": False})

    def txn(
        self,
        compare: list[dict[str, Any]],
        success: list[dict[str, Any]],
        failure: list[dict[str, Any]] | None = None,
    ) -> tuple[bool, int, list[dict[str, Any]]]:
        """One etcd transaction: whether the comparisons held, its revision, its responses."""
        body = {"compare": compare, "success": success, "failure": failure or []}
        reply = self.call("/kv/txn", body)
        revision = int(reply["header"]["revision"])
        return bool(reply.get("succeeded", False)), revision, reply.get("responses") or []

    # ------------------------------------------------------------------ leases

    def grant(self, ttl: int) -> int:
        """A new lease of ``ttl`` seconds; its id."""
        return int(self.call("/lease/grant", {"TTL": ttl, "ID": 0})["ID"])

    def keep_alive(self, lease: int) -> int:
        """Refresh a lease; its remaining TTL (0 or less: it has expired)."""
        reply = self.call("/lease/keepalive", {"ID": lease})
        return int(reply.get("result", {}).get("TTL", 0))

    def revoke(self, lease: int) -> None:
        """End a lease and delete its keys."""
        self.call("/kv/lease/revoke", {"ID": lease})

    # ------------------------------------------------------------------ watch

    def watch(
        self, prefix: str, start_revision: int, stop: threading.Event
    ) -> Iterator[KeyValue | None]:
        """Every put under ``prefix`` from ``start_revision`` on, in revision order, until
        ``stop`` is set. A broken stream is opened again (on the next member) after the last
        revision delivered; ``None`` is yielded whenever it is, so that the caller can check
        that it has missed nothing.

        Raises:
            Compacted: etcd compacted the revision the watch was to go on from: no watch can
                deliver what came before, the caller reads it otherwise and watches anew.
        """
        next_revision = start_revision
        while not stop.is_set():
            with self._lock:
                client = self._clients[self._current]
                self._current = (self._current + 1) % len(self._clients)  # next time: the next
            request = {
                "create_request": {
                    "key": encode(prefix),
                    "range_end": encode(prefix_end(prefix)),
                    "start_revision": next_revision,
                    "filters": ["NODELETE"],
                }
            }
            try:
                with client.session.post(
                    client.get_url("/watch"), json=request, stream=True, timeout=(2, 3)
                ) as reply:
                    for item in _events(reply, stop.is_set):
                        next_revision = item.mod_revision + 1
                        yield item
            except (requests.RequestException, ValueError) as exc:
                LOG.debug("etcd watch on %s:%s broke: %s", client.host, client.port, exc)
            yield None
            stop.wait(0.2)


def _events(reply: requests.Response, stopped: Callable[[], bool]) -> Iterator[KeyValue]:
    """The puts of a gateway watch stream (one JSON object a line). A stream quiet for longer
    than the read timeout raises, and the caller opens it again: that is how ``stop`` is seen
    while nothing changes."""
    for line in reply.iter_lines(chunk_size=None):
        if stopped():
            return
        if not line.strip():
            continue
        result = json.loads(line).get("result", {})
        if int(result.get("compact_revision", 0) or 0) > 0:
            raise Compacted(int(result["compact_revision"]), result.get("cancel_reason", ""))
        if result.get("canceled"):
            raise ValueError(f"watch canceled: {result.get('cancel_reason', '')}")
        for event in result.get("events") or []:
            yield key_value(event["kv"])
