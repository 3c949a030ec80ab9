"""The audit log on a real ``catsctl serve``: what it records, that it redacts secrets, that only
those whose access rules name it read it, that it survives a restart; and that the commit history
holds no more than ``--history-size`` says."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path
from typing import Any

import paramiko
import pytest
import requests
from lxml import etree

from controller.netconf.messages import NC
from tests.functional.admin_client import (
    ADMIN_MODULE,
    HEADERS,
    OLGA,
    commits,
    rpc,
    users_and_top,
)
from tests.functional.netconf_client import RawSession, admin_session, ok, on_datastore, operation
from tests.functional.restconf_server import ADMIN, Server, running_server, write_init

pytestmark = pytest.mark.functional
CLEAR = "clear-text-password-42"


def audit(server: Server, auth: tuple[str, str] = ADMIN) -> list[dict[str, Any]]:
    """The audit records a user reads (oldest first)."""
    reply = server.request("GET", f"data/{ADMIN_MODULE}:audit", auth=auth, headers=HEADERS)
    if reply.status_code == 404:
        return []
    assert reply.status_code == 200, reply.text
    found: list[dict[str, Any]] = reply.json()[f"{ADMIN_MODULE}:audit"].get("record", [])
    return found


def events(server: Server) -> list[str]:
    """The events of the audit, in order."""
    return [record["event"] for record in audit(server)]


def after_a_restart(state: Path, init: Path, last: int, kept: list[dict[str, Any]]) -> None:
    """The audit and the history as they were, the stop and start recorded, and the newest
    commit still rolled back."""
    with running_server(state, init) as server:
        assert commits(server) == kept  # the history is persisted with the datastore
        assert "user[name='newbie']" in kept[0]["changed"][0]
        assert rpc(server, "rollback", {"back": 1}).status_code == 200  # newbie's creation
        assert commits(server)[1:] == kept
        users = server.get_json("data/ietf-system:system/authentication", content="config")
        assert "newbie" not in json.dumps(users)
        again = audit(server)
        assert [r for r in again if int(r["id"]) <= last][-1]["id"] == str(last)
        after = [r["event"] for r in again if int(r["id"]) > last]
        # a session's end may be noticed after the read above; the stop, then the start
        assert after.index("server-stop") < after.index("server-start")
        assert "ignored" in server.stderr()  # the repeated --init-data


def until_recorded(server: Server, event: str) -> list[dict[str, Any]]:
    """The audit records once one of ``event`` is among them (60 s at most)."""
    deadline = time.monotonic() + 60
    while event not in events(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    return audit(server)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One state directory for the module (restarted in it)."""
    return tmp_path_factory.mktemp("audit")


def test_the_audit_records_what_happened_redacted_and_readable_by_admins_only(
    folder: Path,
) -> None:
    init = write_init(folder, users_and_top())
    with running_server(folder / "state", init) as server:
        wrong = requests.get(server.url("data/rc-test:top"), auth=("mallory", CLEAR), timeout=10)
        assert wrong.status_code == 401
        sneaky = requests.get(server.url("data/rc-test:top"), auth=("$0$" + CLEAR, "x"), timeout=10)
        assert sneaky.status_code == 401
        with pytest.raises(paramiko.AuthenticationException):
            RawSession(server.netconf_port, "mallory", CLEAR)
        user = {"name": "newbie", "password": f"$0${CLEAR}"}
        body = json.dumps({"ietf-system:user": [user]})
        path = "data/ietf-system:system/authentication"
        assert server.request("POST", path, data=body, headers=HEADERS).status_code == 201
        assert rpc(server, "rollback", {"back": 1}, auth=OLGA).status_code == 403
        with admin_session(server) as first, admin_session(server) as second:
            ok(first.rpc(on_datastore(operation("lock"), "target", "running")))
            ok(first.rpc(on_datastore(operation("unlock"), "target", "running")))
            ok(second.rpc(on_datastore(operation("lock"), "target", "candidate")))
            kill = operation("kill-session")
            etree.SubElement(kill, NC + "session-id").text = str(second.session_id)
            ok(first.rpc(kill))
            killed = second.session_id
        # the killed session ends (and breaks its lock) in its own thread, after the reply
        records = until_recorded(server, "lock-broken")
        kinds = [r["event"] for r in records]
        for kind in (
            "commit",
            "login-failed",
            "access-denied",
            "session-start",
            "session-end",
            "lock",
            "unlock",
            "kill-session",
            "lock-broken",
            "server-start",
        ):
            assert kind in kinds, kind
        failed = [r for r in records if r["event"] == "login-failed"]
        assert {(r["user"], r["transport"]) for r in failed} >= {
            ("mallory", "restconf"),
            ("mallory", "netconf"),
        }
        assert all(r["source-address"] == "127.0.0.1" for r in failed)
        broken = [r for r in records if r["event"] == "lock-broken"]
        assert broken[-1]["session-id"] == str(killed)
        denied = [r for r in records if r["event"] == "access-denied"][-1]
        assert denied["user"] == OLGA[0]
        assert "user[name='newbie']" in denied["detail"]
        text = json.dumps(records)
        assert CLEAR not in text
        assert "$6$" not in text
        assert "<redacted>" in text  # the user name that looked like a secret
        assert audit(server, OLGA) == []  # default-deny-all: olga's rules do not name it
        database = server.state_dir / "audit.sqlite"
        assert stat.S_IMODE(database.stat().st_mode) == 0o600
        assert CLEAR.encode() not in database.read_bytes()
        last = int(records[-1]["id"])
        kept = commits(server)
    after_a_restart(folder / "state", init, last, kept)


def test_the_history_keeps_the_configured_number_of_commits(tmp_path: Path) -> None:
    init = write_init(tmp_path, users_and_top())
    with running_server(tmp_path / "state", init, "--history-size", "3") as server:
        for number in range(5):
            name = json.dumps({"rc-test:name": f"n{number}"})
            reply = server.request("PUT", "data/rc-test:top/name", data=name, headers=HEADERS)
            assert reply.ok
        assert len(commits(server)) == 3
        too_far = rpc(server, "rollback", {"back": 4})
        assert too_far.status_code == 400
        assert "--history-size" in too_far.text
        assert rpc(server, "rollback", {"back": 3}).status_code == 200
        assert server.get_json("data/rc-test:top/name")["rc-test:name"] == "n1"
