"""SIGKILL while edits are under way: every acknowledged edit survives a restart, and running
still validates."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest
import requests

from controller.datastore.api import SYSTEM, DatastoreName, ReadRequest
from controller.datastore.core import Core
from controller.demo.launch import wait_until
from controller.model import InstanceKind, Schema
from tests.functional.restconf_server import (
    JSON,
    TEST_YANG,
    Server,
    admin_users,
    running_server,
    seeded_server,
)

pytestmark = pytest.mark.functional
WRITERS = 4
ACKNOWLEDGED = 20  # edits acknowledged before the server is killed, the writers still busy
WAIT_S = 120.0


def seed() -> dict[str, object]:
    """The admin and two targets the entries point at."""
    document = admin_users()
    document["bench-list:bench"] = {"target": [{"name": "t1"}, {"name": "t2"}]}
    return document


def writer(server: Server, first: int, acknowledged: list[int], stop: threading.Event) -> None:
    """PUT entries until stopped or the server dies; record each acknowledged key."""
    session = requests.Session()
    session.auth = server.session.auth
    key = first
    while not stop.is_set():
        body = {
            "bench-list:entry": [{"id": key, "name": f"n{key}", "addr": f"a{key}", "target": "t1"}]
        }
        try:
            reply = session.put(
                server.url(f"data/bench-list:bench/entry={key}"),
                json=body,
                headers={"Content-Type": JSON},
                timeout=10,
            )
        except requests.RequestException:
            return
        if reply.status_code == 201:
            acknowledged.append(key)
        key += 1
    session.close()


def test_sigkill_keeps_every_acknowledged_edit(tmp_path: Path) -> None:
    state = tmp_path / "state"
    acknowledged: list[int] = []
    with seeded_server(tmp_path, seed()) as server:
        stop = threading.Event()
        threads = [
            threading.Thread(target=writer, args=(server, 1 + n * 1_000_000, acknowledged, stop))
            for n in range(WRITERS)
        ]
        for thread in threads:
            thread.start()
        wait_until(  # on a condition, not a fixed time (load varies)
            f"{ACKNOWLEDGED} acknowledged edits",
            lambda: len(acknowledged) >= ACKNOWLEDGED,
            timeout=WAIT_S,
            seen=lambda: len(acknowledged),
        )
        server.process.send_signal(signal.SIGKILL)  # the writers are still writing
        server.process.wait()
        stop.set()
        for thread in threads:
            thread.join(timeout=20)
    assert len(acknowledged) >= ACKNOWLEDGED
    with running_server(state) as restarted:
        entries = restarted.get_json("data/bench-list:bench", content="config")
        present = {entry["id"] for entry in entries["bench-list:bench"].get("entry", [])}
        assert set(acknowledged) <= present
    with Schema.for_server((TEST_YANG,)) as schema, Core(schema, state) as core:
        document = core.read(ReadRequest(DatastoreName.RUNNING), SYSTEM).document
        assert document is not None
        schema.validate(document, InstanceKind.CONFIG)
