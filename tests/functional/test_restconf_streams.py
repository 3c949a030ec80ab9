"""RFC 8040 6 event streams as server-sent events, against a real ``catsctl serve``."""

from __future__ import annotations

import json
import signal
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from lxml import etree

from tests.functional.restconf_server import (
    JSON,
    Server,
    admin_users,
    seeded_server,
    worker_processes,
)

pytestmark = pytest.mark.functional
STREAM = "streams/json/NETCONF"
#: Each test runs against RESTCONF in the server process and in two worker processes (a
#: worker relays the core's stream).
RESTCONF_WORKERS = (0, 2)
XML_STREAM = "streams/xml/NETCONF"
NOTIFICATION_NS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NC_NOTIFICATIONS_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-notifications"


def events(reply: requests.Response, count: int) -> list[tuple[str, Any]]:
    """Read ``count`` events (type, JSON data) from an SSE response."""
    found: list[tuple[str, Any]] = []
    kind = "message"
    for raw in reply.iter_lines():
        line = raw.decode()
        if line.startswith("event: "):
            kind = line.removeprefix("event: ")
        elif line.startswith("data: "):
            found.append((kind, json.loads(line.removeprefix("data: "))))
            kind = "message"
            if len(found) == count:
                break
    return found


def put_name(server: Server, name: str) -> None:
    """An edit, which the core announces as netconf-config-change."""
    reply = server.request(
        "PUT", "data/rc-test:top/name", json={"rc-test:name": name}, headers={"Content-Type": JSON}
    )
    assert reply.status_code in (201, 204), reply.text


def test_live_events(server: Server) -> None:
    with server.request(
        "GET", STREAM, stream=True, headers={"Accept": "text/event-stream"}
    ) as reply:
        assert reply.status_code == 200
        assert reply.headers["Content-Type"].startswith("text/event-stream")
        threading.Timer(0.3, put_name, (server, "live")).start()
        ((kind, data),) = events(reply, 1)
    assert kind == "message"
    body = data["ietf-restconf:notification"]
    assert "eventTime" in body
    assert "ietf-netconf-notifications:netconf-config-change" in body


def test_replay_filter_and_stop_time(server: Server) -> None:
    start = datetime.now(UTC) - timedelta(seconds=1)
    put_name(server, "replayed-1")
    put_name(server, "replayed-2")
    stop = datetime.now(UTC) + timedelta(seconds=2)
    params = {"start-time": start.isoformat(), "stop-time": stop.isoformat()}
    with server.request("GET", STREAM, params=params, stream=True, timeout=20) as reply:
        assert reply.status_code == 200, reply.text
        got = events(reply, 10)  # ends at stop-time
    kinds = [kind for kind, _ in got]
    assert kinds[:2] == ["message", "message"]
    assert "replay-complete" in kinds
    filtered = {**params, "filter": "/rc-test:nothing"}
    with server.request("GET", STREAM, params=filtered, stream=True, timeout=20) as reply:
        assert reply.status_code == 200, reply.text
        assert [kind for kind, _ in events(reply, 10)] == ["replay-complete"]


def raw_events(reply: requests.Response, count: int) -> list[tuple[str, str]]:
    """Read ``count`` events (type, data lines joined) from an SSE response, any encoding."""
    found: list[tuple[str, str]] = []
    kind, data = "message", []
    for raw in reply.iter_lines():
        line = raw.decode()
        if line.startswith("event: "):
            kind = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data.append(line.removeprefix("data: "))
        elif not line and data:
            found.append((kind, "\n".join(data)))
            kind, data = "message", []
            if len(found) == count:
                break
    return found


def test_replay_complete_comes_right_after_the_replay(server: Server) -> None:
    start = datetime.now(UTC)
    for index in range(3):
        put_name(server, f"before-{index}")
    params = {"start-time": start.isoformat()}
    with server.request("GET", STREAM, params=params, stream=True, timeout=20) as reply:
        assert reply.status_code == 200, reply.text
        threading.Timer(0.5, put_name, (server, "after")).start()
        got = events(reply, 5)
    assert [kind for kind, _ in got] == ["message"] * 3 + ["replay-complete", "message"]
    replayed = [data["ietf-restconf:notification"] for _, data in got[:3]]
    assert all(datetime.fromisoformat(event["eventTime"]) >= start for event in replayed)
    marker = got[3][1]["ietf-restconf:notification"]
    assert marker["nc-notifications:replayComplete"] == {}
    assert datetime.fromisoformat(marker["eventTime"]) >= datetime.fromisoformat(
        replayed[-1]["eventTime"]
    )
    live = got[4][1]["ietf-restconf:notification"]
    assert datetime.fromisoformat(live["eventTime"]) > datetime.fromisoformat(marker["eventTime"])


def test_xml_stream(server: Server) -> None:
    start = datetime.now(UTC)
    put_name(server, "xml-replayed")
    params = {"start-time": start.isoformat()}
    with server.request(
        "GET",
        XML_STREAM,
        params=params,
        stream=True,
        timeout=20,
        headers={"Accept": "text/event-stream"},
    ) as reply:
        assert reply.status_code == 200, reply.text
        assert reply.headers["Content-Type"].startswith("text/event-stream")
        threading.Timer(0.3, put_name, (server, "xml-live")).start()
        got = raw_events(reply, 3)
    assert [kind for kind, _ in got] == ["message", "replay-complete", "message"]
    for kind, data in got:
        root = etree.fromstring(data.encode())
        assert root.tag == f"{{{NOTIFICATION_NS}}}notification"
        assert root.findtext(f"{{{NOTIFICATION_NS}}}eventTime")
        (body,) = [child for child in root if child.tag != f"{{{NOTIFICATION_NS}}}eventTime"]
        if kind == "replay-complete":
            assert body.tag == "{urn:ietf:params:xml:ns:netmod:notification}replayComplete"
        else:
            assert body.tag == f"{{{NC_NOTIFICATIONS_NS}}}netconf-config-change"
            target = body.findtext(f"{{{NC_NOTIFICATIONS_NS}}}edit/{{{NC_NOTIFICATIONS_NS}}}target")
            assert target is not None
            assert target.endswith(":name")


def test_stream_errors(server: Server) -> None:
    assert server.request("GET", "streams/json/nope").status_code == 404
    assert server.request("GET", "streams/xml/nope").status_code == 404
    assert server.request("GET", "streams/cbor/NETCONF").status_code == 404
    assert (
        server.request("GET", STREAM, params={"stop-time": "2026-01-01T00:00:00Z"}).status_code
        == 400
    )
    assert server.request("GET", STREAM, params={"depth": "1"}).status_code == 400
    assert server.request("POST", STREAM).status_code == 405


def test_streams_need_authentication(server: Server, tmp_path: Path) -> None:
    del tmp_path
    assert requests.get(server.url(STREAM), timeout=10).status_code == 401


@pytest.mark.parametrize("workers", ["0", "2"])
def test_sigterm_with_an_open_stream_stops_at_once(tmp_path: Path, workers: str) -> None:
    """Shutdown ends the subscriptions, so an idle stream does not hold a worker: the server
    exits while the client still holds the stream open (a held worker would keep it running
    for as long as the client waits; the bound is a loaded machine's, not a speed). With
    RESTCONF worker processes, the stream ends through its worker, and the workers exit."""
    with seeded_server(tmp_path, admin_users(), "--restconf-workers", workers) as server:
        children = worker_processes(server.process.pid)
        assert len(children) == int(workers)
        with server.request("GET", STREAM, stream=True, timeout=120) as reply:
            assert next(reply.iter_lines()) == b": subscribed"
            server.process.send_signal(signal.SIGTERM)
            server.process.wait(timeout=60)
        assert server.process.returncode == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in children)
