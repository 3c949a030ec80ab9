"""NETCONF sessions end to end on a real ``catsctl serve``: monitoring state, notifications and
replay (RFC 5277, RFC 6470), public-key authentication, confirmed commit of a dropped session,
and 100 concurrent sessions."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import paramiko
import pytest
from lxml import etree

from controller.netconf.messages import NC
from controller.types import Element
from tests.functional.netconf_client import (
    BENCH_NS,
    RawSession,
    admin_session,
    bench_edit,
    error_items,
    ok,
    on_datastore,
    operation,
)
from tests.functional.restconf_server import (
    ADMIN,
    Server,
    admin_users,
    running_server,
    small_bench,
    write_init,
)

pytestmark = pytest.mark.functional
MON = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
EVENTS = "urn:ietf:params:xml:ns:netconf:notification:1.0"
NOTIFS = "urn:ietf:params:xml:ns:yang:ietf-netconf-notifications"
SYS = "urn:ietf:params:xml:ns:yang:ietf-system"
NC_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
SESSIONS = 100


def seed() -> dict[str, object]:
    """The admin and a small bench-list."""
    return small_bench()


def subscribe(session: RawSession, *, only: str | None = None, **times: datetime) -> None:
    """create-subscription, filtered to one RFC 6470 event when ``only`` names it."""
    request = operation("create-subscription", EVENTS)
    if only is not None:
        holder = etree.SubElement(request, f"{{{EVENTS}}}filter", type="subtree")
        etree.SubElement(holder, f"{{{NOTIFS}}}{only}", nsmap={None: NOTIFS})
    for name, moment in times.items():
        etree.SubElement(request, f"{{{EVENTS}}}{name}").text = moment.isoformat()
    ok(session.rpc(request))


def event(session: RawSession) -> Element:
    """The payload of the next notification (the element after eventTime)."""
    notification = etree.fromstring(session.receive())
    assert notification.tag == f"{{{EVENTS}}}notification", etree.tostring(notification)
    return next(child for child in notification if child.tag != f"{{{EVENTS}}}eventTime")


def name_of(element: Element) -> str:
    """The local name of an element."""
    return str(etree.QName(element).localname)


# ---------------------------------------------------------------- monitoring (RFC 6022)


def test_netconf_state_lists_sessions_schemas_datastores_locks_statistics(server: Server) -> None:
    with admin_session(server) as session:
        ok(session.rpc(on_datastore(operation("lock"), "target", "candidate")))
        get = operation("get")
        holder = etree.SubElement(get, NC + "filter", type="subtree")
        etree.SubElement(holder, f"{{{MON}}}netconf-state", nsmap={None: MON})
        state = ok(session.rpc(get)).find(f"{NC}data/{{{MON}}}netconf-state")
        ok(session.rpc(on_datastore(operation("unlock"), "target", "candidate")))
    assert state is not None
    ids = [
        e.text for e in state.iterfind(f"{{{MON}}}sessions/{{{MON}}}session/{{{MON}}}session-id")
    ]
    assert str(session.session_id) in ids
    schemas = state.iterfind(f"{{{MON}}}schemas/{{{MON}}}schema/{{{MON}}}identifier")
    assert {"bench-list", "ietf-netconf"} <= {e.text for e in schemas}
    datastores = state.findall(f"{{{MON}}}datastores/{{{MON}}}datastore")
    assert {d.findtext(f"{{{MON}}}name") for d in datastores} >= {"running", "candidate"}
    candidate = next(d for d in datastores if d.findtext(f"{{{MON}}}name") == "candidate")
    assert candidate.findtext(f".//{{{MON}}}locked-by-session") == str(session.session_id)
    assert int(state.findtext(f"{{{MON}}}statistics/{{{MON}}}in-sessions") or 0) >= 1


# ---------------------------------------------------------------- notifications (RFC 5277, 6470)


def test_replay_between_start_and_stop_time(server: Server) -> None:
    start = datetime.now(UTC) - timedelta(seconds=1)
    with admin_session(server) as session:
        ok(session.rpc(bench_edit("<entry><id>200</id><name>replayed</name></entry>")))
    stop = datetime.now(UTC) + timedelta(milliseconds=200)
    with admin_session(server) as session:
        subscribe(session, only="netconf-config-change", startTime=start, stopTime=stop)
        seen: list[Element] = []
        while not seen or name_of(seen[-1]) != "replayComplete":
            seen.append(event(session))
        assert name_of(event(session)) == "notificationComplete"
    changes = [e for e in seen[:-1] if name_of(e) == "netconf-config-change"]
    assert len(changes) == len(seen) - 1  # the filter let nothing else through
    targets = [t.text or "" for e in changes for t in e.iter(f"{{{NOTIFS}}}target")]
    assert any("200" in target for target in targets)


def next_event(session: RawSession, name: str, session_id: int | None = None) -> Element:
    """The next notification named ``name`` (of ``session_id``), skipping any other."""
    while True:
        found = event(session)
        if name_of(found) != name:
            continue
        if session_id is None or found.findtext(f"{{{NOTIFS}}}session-id") == str(session_id):
            return found


def test_session_config_change_and_confirmed_commit_events(server: Server) -> None:
    with admin_session(server) as listener:
        subscribe(listener)
        with admin_session(server) as other:
            started = next_event(listener, "netconf-session-start", other.session_id)
            ok(other.rpc(bench_edit("<entry><id>210</id><name>e</name></entry>")))
            change = next_event(listener, "netconf-config-change")
            ok(other.rpc(bench_edit("<entry><id>211</id><name>c</name></entry>", "candidate")))
            ok(other.rpc(operation("commit", confirmed="", confirm_timeout="60")))
            confirmed = next_event(listener, "netconf-confirmed-commit")
            ok(other.rpc(operation("commit")))
            confirming = next_event(listener, "netconf-confirmed-commit")
            ok(other.rpc(operation("close-session")))
        ended = next_event(listener, "netconf-session-end", other.session_id)
    assert started.findtext(f"{{{NOTIFS}}}username") == ADMIN[0]
    assert change.findtext(f"{{{NOTIFS}}}datastore") == "running"
    assert change.findtext(f".//{{{NOTIFS}}}session-id") == str(other.session_id)
    assert confirmed.findtext(f"{{{NOTIFS}}}confirm-event") == "start"
    assert confirmed.findtext(f"{{{NOTIFS}}}timeout") == "60"
    assert confirming.findtext(f"{{{NOTIFS}}}confirm-event") == "complete"
    assert ended.findtext(f"{{{NOTIFS}}}termination-reason") == "closed"


def test_a_dropped_session_cancels_its_confirmed_commit(server: Server) -> None:
    with admin_session(server) as listener:
        subscribe(listener, only="netconf-confirmed-commit")
        dropped = admin_session(server)
        ok(dropped.rpc(bench_edit("<entry><id>220</id><name>d</name></entry>", "candidate")))
        ok(dropped.rpc(operation("commit", confirmed="", confirm_timeout="120")))
        start = next_event(listener, "netconf-confirmed-commit")
        assert start.findtext(f"{{{NOTIFS}}}confirm-event") == "start"
        dropped.close()  # no close-session: the transport just goes
        assert (
            next_event(listener, "netconf-confirmed-commit").findtext(f"{{{NOTIFS}}}confirm-event")
            == "cancel"
        )
        reply = ok(listener.rpc(on_datastore(operation("get-config"), "source", "running")))
    assert "220" not in [node.text for node in reply.iter(f"{{{BENCH_NS}}}id")]


# ---------------------------------------------------------------- authentication


def test_public_key_authentication(server: Server) -> None:
    key = paramiko.ECDSAKey.generate()
    wrong = paramiko.ECDSAKey.generate()
    config = etree.fromstring(
        f'<config xmlns="{NC_NS}"><system xmlns="{SYS}"><authentication><user>'
        f"<name>{ADMIN[0]}</name><authorized-key><name>test</name>"
        f"<algorithm>{key.get_name()}</algorithm><key-data>{key.get_base64()}</key-data>"
        "</authorized-key></user></authentication></system></config>"
    )
    with admin_session(server) as session:
        ok(session.rpc(_edit(config)))
    with RawSession(server.netconf_port, ADMIN[0], pkey=key) as by_key:
        assert by_key.session_id > 0
    with pytest.raises(paramiko.AuthenticationException):
        RawSession(server.netconf_port, ADMIN[0], pkey=wrong)


def _edit(config: Element) -> Element:
    edit = on_datastore(operation("edit-config"), "target", "running")
    edit.append(config)
    return edit


# ---------------------------------------------------------------- concurrency


def _worker(port: int, index: int) -> list[str]:
    """One session: read, edit its own entry, create a shared one, read again."""
    tags: list[str] = []
    with RawSession(port, *ADMIN) as session:
        key = 1000 + index
        steps = [
            on_datastore(operation("get-config"), "source", "running"),
            bench_edit(f"<entry><id>{key}</id><name>n{index}</name></entry>"),
            bench_edit('<entry nc:operation="create"><id>999</id><name>shared</name></entry>'),
            on_datastore(operation("lock"), "target", "startup"),
            on_datastore(operation("get-config"), "source", "running"),
        ]
        for step in steps:
            tags.extend(item["tag"] for item in error_items(session.rpc(step)))
        reply = session.rpc(on_datastore(operation("get-config"), "source", "running"))
        assert str(key) in [node.text for node in reply.iter(f"{{{BENCH_NS}}}id")]
    return tags


def test_100_concurrent_sessions_read_and_edit(server: Server) -> None:
    with ThreadPoolExecutor(SESSIONS) as pool:
        results = list(pool.map(lambda i: _worker(server.netconf_port, i), range(SESSIONS)))
    tags = [tag for found in results for tag in found]
    assert set(tags) <= {"data-exists", "lock-denied"}
    assert tags.count("data-exists") == SESSIONS - 1  # exactly one create of 999 won
    with admin_session(server) as session:
        reply = ok(session.rpc(on_datastore(operation("get-config"), "source", "running")))
    found = {int(node.text) for node in reply.iter(f"{{{BENCH_NS}}}id")}
    assert set(range(1000, 1000 + SESSIONS)) | {999} <= found


def test_host_keys_are_made_when_netconf_listens_and_only_then(tmp_path: Path) -> None:
    """``--netconf-port 0`` serves RESTCONF only: no RSA key is generated for nothing; a
    server that listens makes its keys once and keeps them across restarts."""
    init = write_init(tmp_path, admin_users())
    quiet, listening = tmp_path / "quiet", tmp_path / "listening"
    quiet.mkdir()
    listening.mkdir()
    with running_server(quiet / "state", init, netconf_port=0) as server:
        assert server.get_json("data/ietf-system:system")  # RESTCONF answers
    assert not list((quiet / "state").glob("netconf-host-key*"))
    with running_server(listening / "state", init):
        pass
    keys = {
        path.name: path.read_bytes() for path in (listening / "state").glob("netconf-host-key*")
    }
    assert set(keys) == {"netconf-host-key", "netconf-host-key-ecdsa"}
    with running_server(listening / "state", init):
        pass
    again = {
        path.name: path.read_bytes() for path in (listening / "state").glob("netconf-host-key*")
    }
    assert again == keys
