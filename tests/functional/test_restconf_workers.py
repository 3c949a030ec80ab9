"""RESTCONF worker processes (``catsctl serve --restconf-workers 2``): what only they could
get wrong. The RESTCONF, access control, stream and service-metrics modules run their whole
assertions against workers too (their ``RESTCONF_WORKERS``); this module checks the split
itself: which requests a worker validates, that the core still decides credentials and access
first, that the link between them admits nobody else, and that a worker lost is replaced.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client
from pathlib import Path
from typing import Any

import pytest
import requests
from passlib.hash import sha512_crypt

from tests.functional import metrics
from tests.functional.restconf_server import (
    ADMIN,
    JSON,
    Server,
    admin_policy,
    admin_users,
    running_server,
    seeded_server,
    wait_until,
    worker_processes,
)

pytestmark = pytest.mark.functional
SERVE_ARGS = ("--restconf-workers", "2")
SM = "ietf-cats-service-metrics"
SELECT = f"operations/{SM}:select-service"
PASSWORD = "worker-pw"
_HASH = str(sha512_crypt.using(rounds=5000).hash(PASSWORD))  # cheap to check
MESSAGES = "cats_restconf_worker_messages_total"


def seed() -> dict[str, object]:
    """The admin, ``alice`` (in no group: she may invoke operations) and ``mallory``, whose
    group is denied select-service."""
    document: dict[str, Any] = admin_users()
    users = document["ietf-system:system"]["authentication"]["user"]
    users += [{"name": name, "password": _HASH} for name in ("alice", "mallory")]
    policy = admin_policy(blocked=["mallory"])
    rule = {
        "name": "no-select",
        "module-name": SM,
        "rpc-name": "select-service",
        "access-operations": "exec",
        "action": "deny",
    }
    policy["ietf-netconf-acm:nacm"]["rule-list"].append(
        {"name": "blocked", "group": ["blocked"], "rule": [rule]}
    )
    return {**document, **policy}


def select(session: requests.Session, server: Server, members: dict[str, object]) -> Any:
    """select-service over ``session`` (keep-alive), in JSON."""
    body = json.dumps({f"{SM}:input": members})
    headers = {"Content-Type": JSON, "Accept": JSON}
    return session.post(server.url(SELECT), data=body, headers=headers, timeout=30)


def as_user(user: str, password: str = PASSWORD) -> requests.Session:
    session = requests.Session()
    session.auth = (user, password)
    return session


def counted(server: Server, kind: str) -> float:
    return metrics.value(metrics.samples(server.metrics_port), MESSAGES, kind=kind)


def test_a_worker_validates_the_input_and_the_core_runs_it(server: Server) -> None:
    """After its first request (credentials checked by the core), a connection's
    invocations reach the core validated; a data request reaches it whole."""
    assert len(worker_processes(server.process.pid)) == 2
    session = as_user("alice")
    validated, forwarded = counted(server, "validated"), counted(server, "forwarded")
    for _ in range(3):
        reply = select(session, server, {"cs-id": 99, "ingress": "10.0.0.1"})
        assert reply.status_code == 200, reply.text
        assert reply.json()[f"{SM}:output"]["result"] == "default-route"  # no such service
    assert counted(server, "validated") == validated + 3
    assert server.request("GET", "data/ietf-system:system").status_code == 200
    assert counted(server, "forwarded") >= forwarded + 1


def test_the_core_answers_an_input_a_worker_finds_invalid(server: Server) -> None:
    """The error one process would give, named by libyang: a worker does not answer it."""
    session = as_user("alice")
    assert select(session, server, {"cs-id": 99, "ingress": "10.0.0.1"}).status_code == 200
    validated = counted(server, "validated")
    reply = select(session, server, {"cs-id": 99, "ingress": "10.0.0.1", "dry-run": "maybe"})
    assert reply.status_code == 400, reply.text
    (error,) = reply.json()["ietf-restconf:errors"]["error"]
    assert error["error-tag"] == "invalid-value"
    assert "maybe" in error["error-message"]
    assert counted(server, "validated") == validated


def test_access_control_comes_before_the_input(server: Server) -> None:
    """RFC 8341 3.4.4: mallory is denied select-service whatever her input, valid or not."""
    session = as_user("mallory")
    for members in (
        {"cs-id": 99, "ingress": "10.0.0.1"},
        {"cs-id": 99, "ingress": "10.0.0.1", "dry-run": "maybe"},
    ):
        for _ in range(2):  # the connection's first request, then a validated one
            reply = select(session, server, members)
            assert reply.status_code == 403, reply.text
            (error,) = reply.json()["ietf-restconf:errors"]["error"]
            assert error["error-tag"] == "access-denied"


def test_a_changed_password_refuses_the_next_request_of_an_open_connection(
    server: Server, tmp_path: Path
) -> None:
    """The core checks a connection's credentials on every request a worker hands it."""
    del tmp_path
    user = {"name": "bob", "password": _HASH}
    path = "data/ietf-system:system/authentication/user=bob"
    body = {"ietf-system:user": [user]}
    assert server.request("PUT", path, json=body, headers={"Content-Type": JSON}).ok
    session = as_user("bob")
    assert select(session, server, {"cs-id": 99, "ingress": "10.0.0.1"}).status_code == 200
    changed = {"ietf-system:user": [{**user, "password": str(sha512_crypt.hash("new-pw"))}]}
    assert server.request("PUT", path, json=changed, headers={"Content-Type": JSON}).ok
    reply = select(session, server, {"cs-id": 99, "ingress": "10.0.0.1"})
    assert reply.status_code == 401, reply.text


def gateway_address() -> str:
    """The path of the core's worker gateway (the only one on the machine in this module)."""
    found = [
        line.split()[-1]
        for line in Path("/proc/net/unix").read_text().splitlines()
        if "/cats-restconf-" in line and line.endswith("/gateway")
    ]
    assert found, "no gateway socket"
    return found[0]


def test_the_link_to_the_core_admits_no_other_process(server: Server) -> None:
    """The core's gateway is a socket in a directory only the server's user may enter; even
    that user's other processes are refused without the key the workers were given (the
    refusal is logged), and the workers go on."""
    address = gateway_address()
    assert Path(address).parent.stat().st_mode & 0o777 == 0o700
    with pytest.raises((AuthenticationError, EOFError, ConnectionError)):
        Client(address, family="AF_UNIX", authkey=os.urandom(32)).send("hello")
    wait_until(lambda: "failed its challenge" in server.stderr(), "the refusal was not logged")
    assert server.request("GET", "yang-library-version").status_code == 200
    for pid in worker_processes(server.process.pid):  # the key is in no argv nor environment
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        assert command.split(b"\0")[:3][1:] == [b"-m", b"controller.workers.process"]
        assert b"authkey" not in Path(f"/proc/{pid}/environ").read_bytes()


def test_a_killed_worker_is_replaced(server: Server) -> None:
    """Even while peers hold connections to the gateway without a word: the challenge waits
    on each connection's own thread, so the new worker gets through."""
    silent = [socket.socket(socket.AF_UNIX) for _ in range(8)]
    for peer in silent:
        peer.connect(gateway_address())
    before = worker_processes(server.process.pid)
    victim = before[0]
    os.kill(victim, signal.SIGKILL)
    wait_until(
        lambda: (
            len(set(worker_processes(server.process.pid)) - set(before)) == 1
            and len(worker_processes(server.process.pid)) == 2
        ),
        "the killed worker was not replaced",
        timeout=120,
    )
    assert f"RESTCONF worker {victim} exited" in server.stderr()
    (new,) = set(worker_processes(server.process.pid)) - set(before)
    wait_until(
        lambda: f"RESTCONF worker {new} serves" in server.stderr(),
        "the new worker did not get through the gateway",
        timeout=120,
    )
    for _ in range(10):  # new connections each: some go to the new worker
        fresh = as_user(*ADMIN)
        assert fresh.get(server.url("yang-library-version"), timeout=30).status_code == 200
        fresh.close()
    for peer in silent:
        peer.close()


def test_workers_exit_with_a_killed_server_and_free_its_port(tmp_path: Path) -> None:
    """SIGKILL leaves the server no time to stop its workers: they see their standard input
    end and exit, so no orphan holds the port and a new server starts on it at once."""
    with seeded_server(tmp_path, admin_users(), *SERVE_ARGS) as first:
        children = worker_processes(first.process.pid)
        assert len(children) == 2
        first.process.kill()
        first.process.wait(timeout=60)
        wait_until(
            lambda: not any(_alive(pid) for pid in children),
            "the workers outlived their server",
            timeout=120,
        )
        port = first.port
    with running_server(tmp_path / "state", None, *SERVE_ARGS, port=port) as second:
        assert second.request("GET", "yang-library-version").status_code == 200
        assert len(worker_processes(second.process.pid)) == 2


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie, exited but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
