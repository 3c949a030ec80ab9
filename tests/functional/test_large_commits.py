"""Large NETCONF commits and copies of whole datastores against a real ``catsctl serve``.

A ``<commit>`` of a candidate of 20k new entries (about 100k data nodes) and ``<copy-config>``
of such datastores (RFC 6241 8.3.4.1, 7.3) are worked on a copy, so another client reading
one entry meanwhile gets answers throughout, from the committed state (counted while the
transaction is in flight, :mod:`tools.bench.large_commits`; no timing is asserted). A large
commit of an invalid candidate is refused with the rpc-error naming what is wrong and changes
nothing; one killed with SIGKILL leaves running as it was before or after, never in between.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from lxml import etree

from controller.netconf.messages import BASE_NS
from tests.functional.restconf_server import (
    ADMIN,
    Server,
    admin_users,
    running_server,
    seeded_server,
)
from tools.bench import large_commits
from tools.bench.attackers import NetconfSession
from tools.bench.large_commits import copy_config, edit_candidate, entries_config, ok

pytestmark = pytest.mark.functional
ENTRIES = 20_000  # about 100k data nodes: five leaves each
SERVE_ARGS = ("--max-edit-nodes", "150000")
WAIT_S = 600.0


def seed() -> dict[str, object]:
    """The admin and a small bench-list."""
    document = admin_users()
    document["bench-list:bench"] = {
        "target": [{"name": f"t{n}"} for n in range(large_commits.TARGETS)],
        "entry": [{"id": 1, "name": "one", "target": "t1"}],
    }
    return document


@pytest.fixture
def netconf(server: Server) -> Iterator[NetconfSession]:
    """The admin's NETCONF session."""
    session = NetconfSession(server.netconf_port, *ADMIN)
    session.channel.settimeout(WAIT_S)  # a 20k-entry edit: seconds, minutes under load
    yield session
    session.close()


def running_has(server: Server, reader: requests.Session, key: int) -> bool:
    """Whether running holds entry ``key`` (a RESTCONF read; any other answer fails)."""
    reply = reader.get(server.url(f"data/bench-list:bench/entry={key}"), timeout=WAIT_S)
    assert reply.status_code in (200, 404), reply.text
    return reply.status_code == 200


def candidate_has(session: NetconfSession, key: int) -> bool:
    """Whether the candidate holds entry ``key`` (a NETCONF get-config)."""
    reply = session.rpc(
        "<get-config><source><candidate/></source><filter type='subtree'>"
        f"<bench xmlns='{large_commits.BENCH_NS}'><entry><id>{key}</id></entry></bench>"
        "</filter></get-config>"
    )
    assert b"<rpc-reply" in reply, reply[:2000]
    assert b"rpc-error" not in reply, reply[:2000]
    return f"<id>{key}</id>".encode() in reply


def reader(server: Server) -> requests.Session:
    """Another client, logged in before the transaction starts."""
    session = requests.Session()
    session.auth = ADMIN
    assert running_has(server, session, 1)
    return session


def during(
    server: Server, netconf: NetconfSession, body: str, read: Callable[[], bool]
) -> large_commits.InFlight:
    """``body`` run on ``netconf`` with ``read`` repeated while it is in flight: reads are
    answered meanwhile from the committed state, and once one sees the new state (made
    current, its reply on the way) none sees the old one again."""
    found = large_commits.run_in_flight(netconf, body, server.stderr, read, WAIT_S)
    assert ok(found.reply), found.reply[:2000]
    assert found.old > 0, f"no read answered from the committed state in flight: {found.seen}"
    assert found.seen == sorted(found.seen, reverse=True)  # old ones, then new ones
    return found


def test_reads_go_on_during_a_large_commit_and_copy_config(
    server: Server, netconf: NetconfSession
) -> None:
    session = reader(server)
    other = NetconfSession(server.netconf_port, *ADMIN)
    other.channel.settimeout(WAIT_S)
    try:
        first = 2_000_000
        config = entries_config(first, ENTRIES)
        during(server, netconf, edit_candidate(config), lambda: not candidate_has(other, first))
        assert candidate_has(other, first)
        assert not running_has(server, session, first)
        during(server, netconf, "<commit/>", lambda: not running_has(server, session, first))
        assert running_has(server, session, first + ENTRIES - 1)
        assert not candidate_has(other, 5)

        second = 3_000_000
        assert ok(netconf.rpc(edit_candidate(entries_config(second, ENTRIES))))
        copy = copy_config("candidate", "running")
        during(server, netconf, copy, lambda: not running_has(server, session, second))
        assert running_has(server, session, second + ENTRIES - 1)
        assert running_has(server, session, first)

        assert ok(netconf.rpc(edit_candidate(entries_config(5, 1))))  # in candidate only
        copy = copy_config("running", "candidate")
        during(server, netconf, copy, lambda: candidate_has(other, 5))
        assert not candidate_has(other, 5)
        assert candidate_has(other, second)
        assert not running_has(server, session, 5)
    finally:
        other.close()
        session.close()


def rpc_error(reply: bytes) -> dict[str, str]:
    """The fields of the one ``<rpc-error>`` of a reply (RFC 6241 4.3), by local name."""
    root = etree.fromstring(reply)
    (error,) = root.iter(f"{{{BASE_NS}}}rpc-error")
    return {etree.QName(child).localname: (child.text or "").strip() for child in error}


def test_a_large_invalid_candidate_is_refused_at_commit_and_changes_nothing(
    server: Server, netconf: NetconfSession
) -> None:
    first, last = 4_000_000, 4_000_000 + ENTRIES - 1
    assert ok(netconf.rpc(edit_candidate(entries_config(first, ENTRIES - 1))))
    assert ok(netconf.rpc(edit_candidate(entries_config(last, 1, target="nowhere"))))
    before = server.request("HEAD", "data/bench-list:bench").headers["ETag"]
    error = rpc_error(netconf.rpc("<commit/>"))
    assert error["error-type"] == "application"
    assert error["error-tag"] == "data-missing"
    assert error["error-app-tag"] == "instance-required"
    named = f"/bench-list:bench/bench-list:entry[bench-list:id='{last}']/bench-list:target"
    assert error["error-path"] == named
    assert server.request("HEAD", "data/bench-list:bench").headers["ETag"] == before
    session = reader(server)
    try:
        assert not running_has(server, session, first)
        assert candidate_has(netconf, last)  # the candidate is kept, to be put right
        assert ok(netconf.rpc("<discard-changes/>"))
        assert not candidate_has(netconf, first)
    finally:
        session.close()


def bench_ids(server: Server, first: int) -> set[int]:
    """The ids of running's entries from ``first`` on."""
    entries = server.get_json("data/bench-list:bench")["bench-list:bench"]["entry"]
    return {int(entry["id"]) for entry in entries if int(entry["id"]) >= first}


@pytest.mark.parametrize("moment", ["started", "journal"])
def test_a_large_commit_killed_leaves_running_before_or_after_it(
    tmp_path: Path, moment: str
) -> None:
    """Killed as the commit starts (on its copy), or as its journal record is being written."""
    first = 5_000_000
    with seeded_server(tmp_path, seed(), *SERVE_ARGS) as server:
        netconf = NetconfSession(server.netconf_port, *ADMIN)
        netconf.channel.settimeout(WAIT_S)
        assert ok(netconf.rpc(edit_candidate(entries_config(first, ENTRIES))))
        journal = server.state_dir / "running.journal"
        size = journal.stat().st_size if journal.exists() else 0
        started = server.stderr().count(large_commits.STARTED)
        replies: list[bytes] = []

        def commit() -> None:
            with contextlib.suppress(EOFError, OSError):
                replies.append(netconf.rpc("<commit/>"))

        def due() -> bool:
            if moment == "started":
                return server.stderr().count(large_commits.STARTED) > started
            return journal.exists() and journal.stat().st_size > size

        committing = threading.Thread(target=commit, daemon=True)
        committing.start()
        deadline = time.monotonic() + WAIT_S
        while not due():
            assert time.monotonic() < deadline, f"the commit did not reach {moment}"
            time.sleep(0.01)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=WAIT_S)
        committing.join(WAIT_S)
        netconf.close()
    with running_server(server.state_dir, None, *SERVE_ARGS) as restarted:
        found = bench_ids(restarted, first)
        assert found in (set(), set(range(first, first + ENTRIES))), len(found)
        if replies:  # acknowledged before the kill: durable
            assert ok(replies[0])
            assert found
