"""Hostile and unauthenticated clients cannot stall management (a real ``catsctl serve``).

Each attack of issue 14 runs against the server on loopback, bounded in count and time, from
hostile addresses of its own (127.0.0.2 on), while an authenticated administrator works from
127.0.0.1; each test asserts what that administrator observes (served, never refused, what it
reads unchanged) and what the attackers got (throttled, refused, cut off, the protocol's
error). Latency figures are the bench's (``python -m tools.bench.attacks``), not asserted here.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import paramiko
import pytest
import requests

from controller.netconf.framing import frame
from tests.functional.restconf_server import (
    ADMIN,
    JSON,
    XML,
    Server,
    admin_users,
    seeded_server,
)
from tools.bench import attackers
from tools.bench.attackers import Attacker, Legit, NetconfSession, source

pytestmark = pytest.mark.functional
WATCHER = ("watcher", "watcher-password")
STREAMS = 36  # more than the 32 RESTCONF workers
WAIT_S = 120.0
SERVE_ARGS = (
    *("--restconf-header-timeout", "3"),
    *("--netconf-login-grace-time", "30"),  # a first login (a $6$ check) can take seconds
    *("--netconf-max-startups", "40", "--netconf-max-startups-per-source", "10"),
    *("--login-free-failures", "3"),
    *("--max-subscriptions-per-user", str(STREAMS)),
    *("--max-edit-nodes", "150000"),
)


def seed() -> dict[str, object]:
    """The admin, a read-only watcher (observer) and a small bench-list."""
    from controller.auth import hash_password  # noqa: PLC0415
    from tests.functional.restconf_server import admin_policy  # noqa: PLC0415

    document = admin_users()
    users = document["ietf-system:system"]["authentication"]["user"]  # type: ignore[index]
    users.append({"name": WATCHER[0], "password": hash_password(WATCHER[1])})
    document["bench-list:bench"] = {
        "target": [{"name": f"t{n}"} for n in range(300)],
        "entry": [{"id": 1, "name": "one", "target": "t1"}],
    }
    document.update(admin_policy(observer=[WATCHER[0]]))
    return document


def wait_until(what: str, condition: Callable[[], bool], timeout: float = WAIT_S) -> None:
    """Poll ``condition`` (bounded)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def logins(server: Server, transport: str) -> dict[str, int]:
    """The ``cats-controller-admin:logins`` counters of a transport."""
    rows = server.get_json("data/cats-controller-admin:logins")["cats-controller-admin:logins"]
    row = next(r for r in rows["transport"] if r["name"] == transport)
    return {key: int(value) for key, value in row.items() if key != "name"}


@pytest.fixture
def legit(server: Server) -> Iterator[Legit]:
    """The administrator reading an entry every 20 ms on its keep-alive connection."""
    read = attackers.restconf_reader(server.session, server.url("data/bench-list:bench/entry=1"))
    assert read() is None  # logged in before the attack
    client = Legit(read).start()
    yield client
    client.stop()


def served(client: Legit) -> None:
    """The legitimate client was served throughout, never refused."""
    latencies = client.stop()
    assert latencies.values, "the legitimate client got no answer at all"
    assert not latencies.failures, latencies.failures


def run_until(attack: Attacker, what: str, condition: Callable[[], bool]) -> None:
    """Run an attack until ``condition`` holds (bounded), then stop it."""
    attack.start()
    try:
        wait_until(what, condition)
    finally:
        attack.stop()


def _logged_failures(server: Server, sources: range) -> int:
    """Lines of the server's log saying a RESTCONF login of the admin failed from ``sources``."""
    log = server.stderr()
    return sum(
        log.count(f"login failed: user 'admin' from {source(index)} via restconf")
        for index in sources
    )


def test_password_guessers_are_throttled_logged_and_counted(server: Server, legit: Legit) -> None:
    before = logins(server, "restconf")
    logged = _logged_failures(server, range(8))
    guessers = attackers.RestconfGuessers(server.url("/restconf"), ADMIN[0], threads=8, limit=12)
    guessers.start()
    guessers.finish()  # each stops after its 12 guesses
    served(legit)
    checked, throttled = guessers.tally.get("401"), guessers.tally.get("429")
    assert checked + throttled + guessers.tally.get("503") == 8 * 12
    assert throttled > 0
    assert 0 < checked <= 8  # a few guesses are checked; the rest wait out their delay
    after = logins(server, "restconf")
    assert after["failed"] - before["failed"] == checked
    assert after["throttled"] - before["throttled"] == throttled
    # each checked guess is logged with its source (which guessers got one is the scheduler's)
    assert _logged_failures(server, range(8)) - logged == checked
    # an unknown user is told what a wrong password is told
    stranger = attackers.session_from(source(30))
    assert stranger.get(server.url("data"), auth=("nobody", "x"), timeout=60).status_code == 401
    # the administrator logs in anew from where it works, guessers or not
    fresh = requests.get(server.url("data/bench-list:bench/entry=1"), auth=ADMIN, timeout=60)
    assert fresh.status_code == 200


def _guess_until_cut(transport: paramiko.Transport) -> int:
    """Wrong passwords on one SSH connection until the server cuts it; how many were sent."""
    tries = 0
    while tries < 20 and transport.is_active():
        tries += 1
        try:
            transport.auth_password(ADMIN[0], f"guess-{tries}")
        except paramiko.AuthenticationException:
            continue
        except (paramiko.SSHException, EOFError, OSError):
            break
    return tries


def _attempts(counts: dict[str, int]) -> int:
    """Password attempts a transport's counters hold (checked or refused unchecked)."""
    return counts["failed"] + counts["throttled"] + counts["busy"]


def test_ssh_bounds_attempts_per_connection(server: Server) -> None:
    session = NetconfSession(server.netconf_port, *ADMIN)
    try:
        client = Legit(attackers.netconf_reader(session, 1)).start()
        before = logins(server, "netconf")
        transport = paramiko.Transport(attackers.connect_from(source(40), server.netconf_port))
        transport.start_client(timeout=30)
        tries = _guess_until_cut(transport)
        transport.close()
        assert tries < 20  # cut off (a few more may be sent before the cut: none is tried)
        served(client)
    finally:
        session.close()
    # the client may see the cut before the server's connection thread counts and logs it
    closing = f"closing {source(40)}: 6 failed login attempts"
    wait_until("the cut logged", lambda: closing in server.stderr())
    cut = "the cut counted"
    wait_until(cut, lambda: logins(server, "netconf")["timed-out"] > before["timed-out"])
    after = logins(server, "netconf")
    assert _attempts(after) - _attempts(before) == 6  # MaxAuthTries: 6 tried, no more


def test_half_open_connections_hold_no_worker_and_are_cut(server: Server, legit: Legit) -> None:
    slow = attackers.HalfOpen(server.port, 100)
    cut = "the server to cut 100 of them"
    run_until(slow, cut, lambda: slow.tally.get("closed by the server") >= 100)
    served(legit)
    assert slow.tally.get("opened") >= 100


def test_event_streams_are_off_the_workers_and_bounded_per_user(
    server: Server, legit: Legit
) -> None:
    streams = attackers.Streams(server.url("/restconf"), WATCHER, STREAMS + 2)
    streams.start()
    try:
        wait_until("every stream answered", lambda: sum(streams.tally.counts.values()) >= 38)
        assert streams.tally.get("200") == STREAMS  # more than there are workers
        assert streams.tally.get("409") == 2  # resource-denied past the user's bound
        read = server.request("GET", "data/bench-list:bench/entry=1")
        assert read.status_code == 200  # with 36 streams open
    finally:
        streams.stop()
    served(legit)
    wait_until(
        "the streams to be let go",
        lambda: (
            server.request("GET", "streams/json/NETCONF", stream=True, auth=WATCHER).status_code
            == 200
        ),
    )


def test_an_unauthenticated_ssh_flood_takes_no_session_slot(server: Server) -> None:
    before = logins(server, "netconf")
    session = NetconfSession(server.netconf_port, *ADMIN)
    try:
        client = Legit(attackers.netconf_reader(session, 1)).start()
        flood = attackers.PreAuthSsh(server.netconf_port, 300, sources=10)
        run_until(  # the server's count, not the attackers' clock: the machine may be slow
            flood,
            "connections cut at their grace time",
            lambda: logins(server, "netconf")["timed-out"] > before["timed-out"],
        )
        served(client)
    finally:
        session.close()
    after = logins(server, "netconf")
    assert after["refused-connections"] > before["refused-connections"]
    assert after["timed-out"] > before["timed-out"]
    wait_until("a new login once it is over", lambda: _logs_in(server))


def _logs_in(server: Server) -> bool:
    """Whether the administrator can open a new NETCONF session now."""
    try:
        NetconfSession(server.netconf_port, *ADMIN).close()
    except (paramiko.SSHException, OSError, EOFError):
        return False
    return True


def test_a_200k_attribute_message_is_refused_before_it_is_parsed(server: Server) -> None:
    session = NetconfSession(server.netconf_port, *ADMIN)
    try:
        bomb = attackers.netconf_rpc("<get/>", attributes=200_000)
        session.channel.sendall(frame(bomb, chunked=True))
        reply = session.receive()
        assert b"<error-tag>too-big</error-tag>" in reply
        assert b"more than 128 attributes" in reply
        assert attackers.netconf_reader(session, 1)() is None  # the session goes on
    finally:
        session.close()
    body = (
        b"<bench xmlns='urn:example:bench-list' "
        + b" ".join(b'a%d="1"' % n for n in range(200_000))
        + b"/>"
    )
    refused = server.request(
        "PUT", "data/bench-list:bench", data=body, headers={"Content-Type": XML, "Accept": JSON}
    )  # errors come in the body's encoding unless JSON is asked for
    assert refused.status_code == 413
    assert refused.json()["ietf-restconf:errors"]["error"][0]["error-tag"] == "too-big"


def test_deep_nesting_is_400_and_duplicate_names_are_refused(server: Server) -> None:
    deep = "[" * 20_000 + "]" * 20_000
    reply = server.request(
        "PUT", "data/bench-list:bench", data=deep, headers={"Content-Type": JSON}
    )
    assert reply.status_code == 400
    assert reply.json()["ietf-restconf:errors"]["error"][0]["error-tag"] == "malformed-message"
    twice = '{"bench-list:entry": [{"id": 7, "name": "a", "name": "b"}]}'
    reply = server.request(
        "PUT", "data/bench-list:bench/entry=7", data=twice, headers={"Content-Type": JSON}
    )
    assert reply.status_code == 400
    assert "'name' appears twice" in reply.text
    assert server.request("GET", "data/bench-list:bench/entry=7").status_code == 404
    assert "Traceback" not in server.stderr()


def test_reads_go_on_during_a_large_edit_and_see_the_committed_state(server: Server) -> None:
    body = attackers.bench_entries(1_000_000, 20_000)
    outcome: dict[str, int] = {}

    def edit() -> None:
        reply = server.session.patch(
            server.url("data/bench-list:bench"),
            data=body,
            headers={"Content-Type": JSON},
            timeout=1800,
        )
        outcome["status"] = reply.status_code

    writer = threading.Thread(target=edit)
    reader = requests.Session()
    reader.auth = ADMIN
    started = "a large edit of about"
    before = server.stderr().count(started)
    old_reads = 0
    writer.start()
    wait_until("the edit to start", lambda: server.stderr().count(started) > before)
    while writer.is_alive():
        reply = reader.get(server.url("data/bench-list:bench/entry=1000000"), timeout=60)
        assert reply.status_code in (200, 404)
        # asked after the edit started, answered before it was made current: a read in flight
        # beside it, from the committed state
        old_reads += reply.status_code == 404
        time.sleep(0.05)
    writer.join()
    assert outcome["status"] == 204
    assert old_reads > 0
    assert reader.get(server.url("data/bench-list:bench/entry=1019999"), timeout=60).ok
    too_large = attackers.bench_entries(2_000_000, 30_000)
    reply = server.request(
        "PATCH", "data/bench-list:bench", data=too_large, headers={"Content-Type": JSON}
    )
    assert reply.status_code == 413
    assert "--max-edit-nodes" in reply.json()["ietf-restconf:errors"]["error"][0]["error-message"]


def test_the_counters_are_operational_state(server: Server) -> None:
    found = server.get_json("data/cats-controller-admin:logins")["cats-controller-admin:logins"]
    assert {row["name"] for row in found["transport"]} == {"restconf", "netconf"}
    assert "discontinuity-time" in found
    assert json.dumps(found)  # RFC 7951 JSON as the YANG module says


def _raw_request(port: int, address: str, head: bytes) -> socket.socket:
    """A raw connection from ``address`` that has sent ``head``."""
    sock = attackers.connect_from(address, port)
    sock.settimeout(1.0)
    sock.sendall(head)
    return sock


def _answer_or_close(sock: socket.socket, trickle: bytes = b"") -> bytes:
    """What the server sends until it closes the connection (bounded); ``trickle`` is sent
    between reads, as a slow client would send its body."""
    received = b""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            if trickle:
                with contextlib.suppress(OSError):
                    sock.sendall(trickle)
            continue
        except OSError:
            return received
        if not chunk:
            return received
        received += chunk
    raise AssertionError(f"the server never closed the connection; got {received[:200]!r}")


def _still_open(sock: socket.socket) -> bool:
    """Whether the server has not closed a silent connection (nothing to read yet)."""
    sock.setblocking(False)  # noqa: FBT003
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def test_a_trickled_body_an_idle_keep_alive_and_a_crowding_source_are_cut(
    tmp_path: Path,
) -> None:
    extra = (
        *("--restconf-body-timeout", "3", "--restconf-idle-timeout", "3"),
        *("--restconf-header-timeout", "600", "--restconf-max-connections-per-source", "8"),
    )
    with seeded_server(tmp_path, seed(), *extra) as own:
        read = attackers.restconf_reader(own.session, own.url("data/bench-list:bench/entry=1"))
        assert read() is None
        client = Legit(read).start()
        token = base64.b64encode(f"{ADMIN[0]}:{ADMIN[1]}".encode())
        # a body larger than the gate's buffer, a few bytes a second: the worker reading it
        # gives up at the body deadline (408), however steadily the bytes come
        slow = _raw_request(
            own.port,
            source(50),
            b"PUT /restconf/data/bench-list:bench HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/yang-data+json\r\n"
            b"Authorization: Basic " + token + b"\r\nContent-Length: 1000000\r\n\r\n{",
        )
        with slow:
            answer = _answer_or_close(slow, trickle=b" " * 16)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"--restconf-body-timeout" in answer
        # a keep-alive connection that asked once and then says nothing is closed
        idle = _raw_request(
            own.port,
            source(51),
            b"GET /restconf/data/bench-list:bench/entry=1 HTTP/1.1\r\nHost: x\r\n"
            b"Authorization: Basic " + token + b"\r\n\r\n",
        )
        with idle:
            answer = _answer_or_close(idle)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        assert b"connection: close" not in answer.lower()  # kept alive, then cut when idle
        # one address holds at most 8 connections waiting in the gate: the 9th is closed at
        # once, the 8 stay (their head deadline is far), and other addresses are let in
        crowd = [attackers.connect_from(source(52), own.port) for _ in range(8)]
        try:
            ninth = attackers.connect_from(source(52), own.port)
            ninth.settimeout(1.0)
            with ninth:
                assert _answer_or_close(ninth) == b""
            assert all(_still_open(sock) for sock in crowd)
            assert own.request("GET", "data/bench-list:bench/entry=1").status_code == 200
        finally:
            for sock in crowd:
                sock.close()
        served(client)
        assert own.request("GET", "data/bench-list:bench/entry=1").status_code == 200
        assert "Traceback" not in own.stderr()
