"""Access control (RFC 8341) over both northbounds of a real ``catsctl serve``.

The server runs the shipped default policy (controller.auth.policy) with one user per role, a
user in no group, and a recovery user. Every check goes through the real protocols: RESTCONF
over HTTP (requests) and NETCONF over SSH (ncclient).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from lxml import etree
from ncclient.operations.rpc import RPCError
from passlib.hash import sha512_crypt

from controller.auth.policy import default_policy
from tests.functional.netconf_client import connect_nc
from tests.functional.restconf_server import JSON, Server, seeded_server, wait_until

pytestmark = pytest.mark.functional

PASSWORD = "s3cret-pw"
_HASH = str(sha512_crypt.using(rounds=5000).hash(PASSWORD))  # cheap to check: many logins
SM = "ietf-cats-service-metrics"
ST = "ietf-cats-steering"
NACM = "ietf-netconf-acm"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
SM_NS = f"urn:ietf:params:xml:ns:yang:{SM}"
ROLES = {
    "admin": ["root"],
    "operator": ["oper"],
    "observer": ["watcher"],
    "csma": ["csma-1"],
    "cnma": ["cnma-1"],
    "gateway": ["gw"],
    "client": ["ingress"],
}
USERS = [user for members in ROLES.values() for user in members] + ["nobody", "rescue"]
FORWARDER_PASSWORD = "forwarder-pw"
SERVE_ARGS = ("--recovery-user", "rescue")
#: Each test runs against RESTCONF in the server process and in two worker processes: access
#: control is the core's either way.
RESTCONF_WORKERS = (0, 2)


def seed() -> dict[str, object]:
    """The default policy with a user per role, and a forwarder with its password."""
    users = [{"name": name, "password": _HASH} for name in USERS]
    forwarder = {
        "name": "f1",
        "address": "127.0.0.1",
        "port": 1,
        "username": "cps",
        "password": FORWARDER_PASSWORD,
        "role": ["egress"],
    }
    return {
        "ietf-system:system": {"authentication": {"user": users}},
        f"{SM}:update-control": {"heartbeat-interval": 60},
        f"{ST}:forwarders": {"forwarder": [forwarder]},
        **default_policy(ROLES),
    }


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("nacm")
    workers = ("--restconf-workers", str(request.param)) if request.param else ()
    with seeded_server(folder, seed(), *SERVE_ARGS, *workers) as running:
        yield running


# -- RESTCONF and NETCONF as a user ---------------------------------------------------------


def rc(server: Server, user: str, method: str, path: str, body: Any = None) -> requests.Response:
    headers = {"Accept": JSON}
    if body is not None:
        headers["Content-Type"] = JSON
    return requests.request(
        method,
        server.url(path),
        auth=(user, PASSWORD),
        headers=headers,
        data=None if body is None else json.dumps(body),
        timeout=30,
    )


def nc(server: Server, user: str) -> Any:
    return connect_nc(server.netconf_port, user, PASSWORD)


def nc_error(call: Any) -> str | None:
    """The error-tag an ncclient call raises (None when it succeeds)."""
    try:
        call()
    except RPCError as exc:
        return str(exc.tag)
    return None


def error_tag(reply: requests.Response) -> str:
    """The error-tag of a RESTCONF error reply ("" for a success)."""
    if reply.status_code < 400:
        return ""
    return str(reply.json()["ietf-restconf:errors"]["error"][0]["error-tag"])


def heartbeat_edit(value: int) -> str:
    return (
        f'<config xmlns="{NC}"><update-control xmlns="{SM_NS}">'
        f"<heartbeat-interval>{value}</heartbeat-interval></update-control></config>"
    )


def heartbeat(server: Server) -> int:
    found = admin_get(server, f"data/{SM}:update-control")
    return int(found[f"{SM}:update-control"]["heartbeat-interval"])


def admin_get(server: Server, path: str) -> Any:
    reply = rc(server, "root", "GET", path)
    assert reply.status_code == 200, reply.text
    return reply.json()


# -- the matrix -----------------------------------------------------------------------------

#: user -> may write the selection policy's update control (operator and admin only).
WRITERS = {"root": True, "oper": True, "watcher": False, "csma-1": False, "gw": False}
WRITERS.update({"nobody": False, "ingress": False})


@pytest.mark.parametrize(("user", "allowed"), sorted(WRITERS.items()))
def test_restconf_writes_follow_the_policy(server: Server, user: str, *, allowed: bool) -> None:
    before = heartbeat(server)
    value = before + 1
    body = {f"{SM}:update-control": {"heartbeat-interval": value}}
    reply = rc(server, user, "PATCH", f"data/{SM}:update-control", body)
    if allowed:
        assert reply.status_code == 204, reply.text
        assert heartbeat(server) == value
        return
    assert reply.status_code == 403, reply.text
    error = reply.json()["ietf-restconf:errors"]["error"][0]
    assert error["error-tag"] == "access-denied"
    assert error["error-path"].startswith(f"/{SM}:update-control")
    assert heartbeat(server) == before  # nothing changed


@pytest.mark.parametrize(("user", "allowed"), sorted(WRITERS.items()))
def test_netconf_writes_follow_the_policy(server: Server, user: str, *, allowed: bool) -> None:
    before = heartbeat(server)
    with nc(server, user) as session:
        tag = nc_error(lambda: session.edit_config(target="running", config=heartbeat_edit(7)))
    if allowed:
        assert tag is None
        assert heartbeat(server) == 7
        restore = {f"{SM}:update-control": {"heartbeat-interval": before}}
        rc(server, "root", "PATCH", f"data/{SM}:update-control", restore)
        return
    assert tag == "access-denied"
    assert heartbeat(server) == before


READERS = {"root": True, "oper": True, "watcher": True, "nobody": True}
READERS.update({"csma-1": False, "gw": False, "ingress": False})


@pytest.mark.parametrize(("user", "allowed"), sorted(READERS.items()))
def test_reads_are_filtered_silently(server: Server, user: str, *, allowed: bool) -> None:
    reply = rc(server, user, "GET", f"data/{SM}:update-control")
    assert reply.status_code == (200 if allowed else 404), reply.text
    with nc(server, user) as session:
        subtree = f'<update-control xmlns="{SM_NS}"/>'
        if user in ("csma-1", "gw", "ingress"):  # their roles may not even invoke get-config
            tag = nc_error(lambda: session.get_config("running", filter=("subtree", subtree)))
            assert tag == "access-denied"
            return
        data = session.get_config("running", filter=("subtree", subtree)).data_ele
    found = data.find(f"{{{SM_NS}}}update-control")
    assert (found is not None) == allowed


@pytest.mark.parametrize("user", [u for u in USERS if u not in ("root", "rescue")])
def test_secrets_and_nacm_are_absent_for_everyone_but_the_admin(server: Server, user: str) -> None:
    whole = rc(server, user, "GET", "data")
    text = whole.text if whole.status_code == 200 else ""
    for secret in ("$6$", "$5$", "$8$", FORWARDER_PASSWORD):  # hashes, southbound password
        assert secret not in text
    assert f"{NACM}:nacm" not in text or "rule-list" not in text
    seen = admin_get(server, "data")["ietf-restconf:data"]
    assert "$6$" in json.dumps(seen)  # the admin reads them
    stored = seen[f"{ST}:forwarders"]["forwarder"][0]["password"]
    assert stored.startswith("$8$")  # encrypted at rest, never the clear text
    assert FORWARDER_PASSWORD not in json.dumps(seen)


@pytest.mark.parametrize(
    ("user", "allowed"),
    [("csma-1", True), ("nobody", True), ("oper", True), ("watcher", False), ("gw", False)],
)
def test_operations_follow_the_policy(server: Server, user: str, *, allowed: bool) -> None:
    """report-service-metrics: the C-SMA role's RPC; denied is access-denied, anything else
    (a refused report included) means the operation was permitted."""
    members = {"sequence-number": "1", "timestamp": datetime.now(UTC).isoformat(), "entry": []}
    body = {f"{SM}:input": members}
    reply = rc(server, user, "POST", f"operations/{SM}:report-service-metrics", body)
    assert (error_tag(reply) != "access-denied") == allowed, reply.text
    with nc(server, user) as session:
        rpc = etree.fromstring(
            f'<report-service-metrics xmlns="{SM_NS}"><sequence-number>2</sequence-number>'
            f"<timestamp>{members['timestamp']}</timestamp></report-service-metrics>"
        )
        assert (nc_error(lambda: session.dispatch(rpc)) != "access-denied") == allowed


# -- privilege escalation ----------------------------------------------------------------------


@pytest.mark.parametrize("user", ["oper", "watcher", "csma-1", "nobody"])
def test_no_way_up(server: Server, user: str) -> None:
    """Writing NACM, joining a group, creating users, disabling NACM, reading hashes."""
    policy_path = f"data/{NACM}:nacm?content=config"
    policy_before = admin_get(server, policy_path)
    join_admin = {f"{NACM}:group": [{"name": "admin", "user-name": [user]}]}
    evil = {"ietf-system:user": [{"name": "evil", "password": "$0$evil"}]}
    attempts = [
        ("PATCH", f"data/{NACM}:nacm", {f"{NACM}:nacm": {"enable-nacm": False}}),
        ("PATCH", f"data/{NACM}:nacm/groups/group=admin", join_admin),
        ("POST", "data/ietf-system:system/authentication", evil),
        ("PATCH", f"data/{NACM}:nacm", {f"{NACM}:nacm": {"write-default": "permit"}}),
    ]
    for method, path, body in attempts:
        reply = rc(server, user, method, path, body)
        assert reply.status_code == 403, (method, path, reply.text)
    assert admin_get(server, policy_path) == policy_before
    users = admin_get(server, "data/ietf-system:system/authentication")
    assert "evil" not in json.dumps(users)
    with nc(server, user) as session:
        edit = (
            f'<config xmlns="{NC}"><nacm xmlns="urn:ietf:params:xml:ns:yang:{NACM}">'
            "<enable-nacm>false</enable-nacm></nacm></config>"
        )
        assert nc_error(lambda: session.edit_config(target="running", config=edit)) == (
            "access-denied"
        )
        assert nc_error(lambda: session.delete_config(target="startup")) == "access-denied"
    assert admin_get(server, policy_path) == policy_before


def test_kill_session_of_another_user_is_refused_but_not_to_the_admin(server: Server) -> None:
    victim = nc(server, "watcher")
    with nc(server, "oper") as attacker:
        assert nc_error(lambda: attacker.kill_session(victim.session_id)) == "access-denied"
    assert victim.connected
    victim_id = victim.session_id
    assert victim.get_config("running") is not None  # still served
    with nc(server, "root") as admin:
        assert nc_error(lambda: admin.kill_session(victim_id)) is None
    wait_until(lambda: not victim.connected, "the killed session is still open")


# -- rule changes and accounts -------------------------------------------------------------------


def test_a_rule_change_applies_to_the_next_operation_of_an_open_session(server: Server) -> None:
    rules = [
        {
            "name": "edit-config",
            "module-name": "ietf-netconf",
            "rpc-name": "edit-config",
            "access-operations": "exec",
            "action": "permit",
        },
        {
            "name": "update-control",
            "path": f"/{SM}:update-control",
            "access-operations": "update",
            "action": "permit",
        },
    ]
    rule_list = {"name": "observer-may-tune", "group": ["observer"], "rule": rules}
    path = f"data/{NACM}:nacm/rule-list=observer-may-tune"
    with nc(server, "watcher") as session:

        def tune(value: int) -> str | None:
            return nc_error(
                lambda: session.edit_config(target="running", config=heartbeat_edit(value))
            )

        assert tune(9) == "access-denied"
        body = {f"{NACM}:rule-list": [rule_list]}
        insert = rc(server, "root", "POST", f"data/{NACM}:nacm?insert=first", body)
        assert insert.status_code == 201, insert.text
        try:
            assert tune(9) is None  # the same session, its next operation
            assert heartbeat(server) == 9
        finally:
            assert rc(server, "root", "DELETE", path).status_code == 204
        assert tune(8) == "access-denied"


def test_a_deleted_users_sessions_and_streams_end(server: Server) -> None:
    user = {"name": "temp", "password": _HASH}
    path = "data/ietf-system:system/authentication/user=temp"
    created = rc(server, "root", "PUT", path, {"ietf-system:user": [user]})
    assert created.status_code == 201, created.text
    session = nc(server, "temp")
    stream = requests.get(
        server.url("streams/json/NETCONF"), auth=("temp", PASSWORD), stream=True, timeout=30
    )
    assert stream.status_code == 200
    ended = threading.Event()

    def drain() -> None:
        for _ in stream.iter_lines():
            pass
        ended.set()

    threading.Thread(target=drain, daemon=True).start()
    assert rc(server, "root", "DELETE", path).status_code == 204
    assert ended.wait(30), "the deleted user's event stream did not end"
    wait_until(lambda: not session.connected, "the deleted user's NETCONF session is open")
    assert rc(server, "temp", "GET", "data").status_code == 401


# -- notifications -------------------------------------------------------------------------------


def test_notifications_are_delivered_only_where_they_may_be_read(server: Server) -> None:
    """A user whose rules deny reading ietf-cats-service-metrics gets none of its events,
    live or replayed; the admin gets them."""
    rule = {"name": "no-sm", "module-name": SM, "access-operations": "read", "action": "deny"}
    rule_list = {"name": "observer-no-sm", "group": ["observer"], "rule": [rule]}
    body = {f"{NACM}:rule-list": [rule_list]}
    added = rc(server, "root", "POST", f"data/{NACM}:nacm?insert=first", body)
    assert added.status_code == 201, added.text
    try:
        start = (datetime.now(UTC) - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        stale = {f"{SM}:input": {"sequence-number": "1", "timestamp": "2000-01-01T00:00:00Z"}}
        refused = rc(server, "root", "POST", f"operations/{SM}:report-service-metrics", stale)
        assert refused.status_code >= 400  # a report-refused event of the SM module
        seen = {name: events(server, name, start) for name in ("root", "watcher")}
        live = {name: live_events(server, name) for name in ("root", "watcher")}
        again = rc(server, "root", "POST", f"operations/{SM}:report-service-metrics", stale)
        assert again.status_code >= 400
        sentinel = {f"{SM}:update-control": {"heartbeat-interval": 61}}  # a config-change event
        rc(server, "root", "PATCH", f"data/{SM}:update-control", sentinel)
        received = {name: until_config_change(stream) for name, stream in live.items()}
        over_netconf = {name: netconf_replay(server, name, start) for name in ("root", "watcher")}
    finally:
        rc(server, "root", "DELETE", f"data/{NACM}:nacm/rule-list=observer-no-sm")
    event_name = f'"{SM}:report-refused"'  # of the module the watcher may not read
    assert any(event_name in event for event in seen["root"])  # replayed
    assert not any(event_name in event for event in seen["watcher"])
    assert any(event_name in event for event in received["root"])  # live
    assert not any(event_name in event for event in received["watcher"])
    assert any("netconf-config-change" in event for event in received["watcher"])
    assert any("report-refused" in event for event in over_netconf["root"])  # NETCONF replay
    assert not any("report-refused" in event for event in over_netconf["watcher"])


def netconf_replay(server: Server, user: str, start: str) -> list[str]:
    """The notifications a NETCONF subscription with replay from ``start`` delivers, up to
    replayComplete (RFC 5277)."""
    found: list[str] = []
    with nc(server, user) as session:
        session.create_subscription(start_time=start)
        while True:
            notification = session.take_notification(timeout=30)
            assert notification is not None, "no replayComplete"
            if "replayComplete" in notification.notification_xml:
                return found
            found.append(notification.notification_xml)


def live_events(server: Server, user: str) -> Iterator[str]:
    """The data lines of a user's live stream, as they come."""
    reply = requests.get(
        server.url("streams/json/NETCONF"), auth=(user, PASSWORD), stream=True, timeout=30
    )
    assert reply.status_code == 200
    lines = reply.iter_lines(decode_unicode=True)
    next(lines, None)  # the stream has started once its first line is there (or none)
    return (line for line in lines if line.startswith("data:"))


def until_config_change(stream: Iterator[str]) -> list[str]:
    """The events of a live stream up to the first netconf-config-change."""
    found = []
    for event in stream:
        found.append(event)
        if "netconf-config-change" in event:
            break
    return found


def events(server: Server, user: str, start: str) -> list[str]:
    """The events a user's replay from ``start`` delivers, up to the replay-complete marker."""
    found: list[str] = []
    with requests.get(
        server.url(f"streams/json/NETCONF?start-time={start}"),
        auth=(user, PASSWORD),
        stream=True,
        timeout=30,
    ) as reply:
        assert reply.status_code == 200
        for line in reply.iter_lines(decode_unicode=True):
            if line.startswith("data:"):
                if "replayComplete" in line:
                    break
                found.append(line)
    return found


# -- the recovery session and $0$ passwords ------------------------------------------------------


def test_the_recovery_user_bypasses_access_control_and_is_logged(server: Server) -> None:
    reply = rc(server, "rescue", "GET", f"data/{NACM}:nacm")
    assert reply.status_code == 200
    assert "rule-list" in reply.text
    assert "recovery session of rescue via restconf" in server.stderr()


def test_a_clear_text_password_is_hashed_and_never_stored(server: Server) -> None:
    clear = "brand-new-clear-pw"
    body = {"ietf-system:user": [{"name": "fresh", "password": f"$0${clear}"}]}
    path = "data/ietf-system:system/authentication/user=fresh"
    assert rc(server, "root", "PUT", path, body).status_code == 201
    stored = admin_get(server, path)["ietf-system:user"][0]["password"]
    assert stored.startswith("$6$")
    assert requests.get(server.url("data"), auth=("fresh", clear), timeout=30).status_code == 200
    with connect_nc(server.netconf_port, "fresh", clear) as session:
        assert session.connected
    for file in server.state_dir.rglob("*"):
        if file.is_file():
            assert clear.encode() not in file.read_bytes(), file
            assert FORWARDER_PASSWORD.encode() not in file.read_bytes(), file
    assert clear not in server.stderr()


def test_state_files_are_private(server: Server) -> None:
    assert server.state_dir.stat().st_mode & 0o777 == 0o700
    for file in server.state_dir.rglob("*"):
        if file.is_file():
            assert file.stat().st_mode & 0o077 == 0, file


def test_the_counters_count_and_validate(server: Server) -> None:
    body = {f"{SM}:update-control": {"heartbeat-interval": 5}}
    rc(server, "watcher", "PATCH", f"data/{SM}:update-control", body)
    with nc(server, "csma-1") as session:
        nc_error(lambda: session.get_config("running"))
    state = admin_get(server, f"ds/ietf-datastores:operational/{NACM}:nacm")[f"{NACM}:nacm"]
    assert int(state["denied-data-writes"]) >= 1
    assert int(state["denied-operations"]) >= 1
    assert "denied-notifications" in state
