"""NETCONF (RFC 6241, 6242) against a real ``catsctl serve`` with ncclient and a raw client."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from lxml import etree
from ncclient.operations.rpc import RPCError

from controller.demo.launch import wait_until
from controller.netconf.messages import BASE_11, NC
from tests.functional.netconf_client import RawSession, admin_nc, admin_session, error_tags
from tests.functional.restconf_server import JSON, Server, small_bench

pytestmark = pytest.mark.functional
WAIT_S = 60.0  # conditions come true sooner; a loaded machine may take longer
BL = "urn:example:bench-list"
CONFIG_NS = 'xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"'
#: An entry start tag that binds ``nc:`` for an operation attribute (RFC 6241 7.2).
NC_ENTRY = '<entry xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0"'


def seed() -> dict[str, object]:
    """Running at start: the admin and a small bench-list."""
    return small_bench()


def config(body: str) -> str:
    """A ``<config>`` holding ``body`` in bench-list."""
    return f'<config {CONFIG_NS}><bench xmlns="{BL}">{body}</bench></config>'


def entry_ids(reply: Any) -> list[str]:
    """The ids of bench entries in a get-config reply."""
    root = etree.fromstring(reply.xml.encode())
    return [node.text or "" for node in root.iter(f"{{{BL}}}id")]


def bench(m: Any, source: str = "running") -> list[str]:
    """Entry ids of a datastore."""
    return entry_ids(m.get_config(source, filter=("subtree", f'<bench xmlns="{BL}"/>')))


def drain(raw: RawSession) -> None:
    """Read until the server closes the session."""
    while True:
        raw.receive()


def test_hello_capabilities_and_session_ids(server: Server) -> None:
    with admin_nc(server) as first, admin_nc(server) as second:
        caps = list(first.server_capabilities)
        assert BASE_11 in caps
        assert any(":candidate:1.0" in cap for cap in caps)
        assert any("yang-library:1.1?revision=" in cap and "content-id=" in cap for cap in caps)
        assert first.session_id != second.session_id


def test_base_10_end_of_message_framing(server: Server) -> None:
    with admin_session(server, base11=False) as raw:
        operation = etree.Element(NC + "get-config")
        etree.SubElement(etree.SubElement(operation, NC + "source"), NC + "running")
        reply = raw.rpc(operation, "m-1")
        assert reply.get("message-id") == "m-1"
        assert reply.find(f"{NC}data/{{{BL}}}bench") is not None


def test_edit_config_merge_delete_and_filters(server: Server) -> None:
    with admin_nc(server) as m:
        m.edit_config(target="running", config=config("<entry><id>10</id><name>ten</name></entry>"))
        assert "10" in bench(m)
        picked = m.get_config("running", filter=("xpath", "/bench-list:bench/entry[id=10]"))
        assert entry_ids(picked) == ["10"]
        delete = '<entry xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0" nc:operation="delete">'
        m.edit_config(target="running", config=config(f"{delete}<id>10</id></entry>"))
        assert "10" not in bench(m)


@pytest.mark.parametrize(
    ("body", "tag"),
    [
        ("<entry><id>20</id></entry>", "missing-element"),  # mandatory name
        (f'{NC_ENTRY} nc:operation="create"><id>1</id><name>x</name></entry>', "data-exists"),
        (f'{NC_ENTRY} nc:operation="delete"><id>99</id></entry>', "data-missing"),
        (f'{NC_ENTRY} nc:operation="bogus"><id>1</id></entry>', "bad-attribute"),
        ("<entry><id>21</id><name>x</name><weight>5000</weight></entry>", "invalid-value"),
        ("<nothing/>", "unknown-element"),
    ],
)
def test_edit_config_errors_change_nothing(server: Server, body: str, tag: str) -> None:
    with admin_nc(server) as m:
        before = bench(m)
        with pytest.raises(RPCError) as raised:
            m.edit_config(target="running", config=config(body))
        assert raised.value.tag == tag
        assert bench(m) == before


def test_unknown_namespace(server: Server) -> None:
    with admin_nc(server) as m, pytest.raises(RPCError) as raised:
        m.edit_config(
            target="running", config=f'<config {CONFIG_NS}><x xmlns="urn:nope"/></config>'
        )
    assert raised.value.tag == "unknown-namespace"


def test_candidate_commit_discard_and_validate(server: Server) -> None:
    with admin_nc(server) as m:
        m.edit_config(target="candidate", config=config("<entry><id>30</id><name>c</name></entry>"))
        assert "30" in bench(m, "candidate")
        assert "30" not in bench(m)
        m.validate(source="candidate")
        m.commit()
        assert "30" in bench(m)
        m.edit_config(target="candidate", config=config("<entry><id>31</id><name>d</name></entry>"))
        m.discard_changes()
        assert "31" not in bench(m, "candidate")


def test_continue_on_error_keeps_the_successes(server: Server) -> None:
    body = "<entry><id>40</id><name>ok</name></entry><entry><id>41</id></entry>"
    with admin_nc(server) as m:
        with pytest.raises(RPCError):
            m.edit_config(target="running", config=config(body), error_option="continue-on-error")
        assert "40" in bench(m)
        assert "41" not in bench(m)


def test_lock_across_sessions_and_protocols(server: Server) -> None:
    first = admin_nc(server)
    first.lock("running")
    with admin_nc(server) as second:
        with pytest.raises(RPCError) as raised:
            second.lock("running")
        assert raised.value.tag == "lock-denied"
        with pytest.raises(RPCError) as denied:
            second.edit_config(
                target="running", config=config("<entry><id>50</id><name>x</name></entry>")
            )
        assert denied.value.tag == "lock-denied"
    patch = {"bench-list:entry": [{"id": 51, "name": "rest"}]}
    reply = server.request(
        "PUT", "data/bench-list:bench/entry=51", json=patch, headers={"Content-Type": JSON}
    )
    assert reply.status_code == 409, reply.text
    assert reply.json()["ietf-restconf:errors"]["error"][0]["error-tag"] == "lock-denied"
    first._session.close()  # dropped, not closed: its locks go with it

    def put() -> requests.Response | None:
        found = server.request(
            "PUT", "data/bench-list:bench/entry=51", json=patch, headers={"Content-Type": JSON}
        )
        return found if found.status_code in (200, 201, 204) else None

    wait_until("the dropped session's lock released", put, timeout=WAIT_S)


def test_kill_session_releases_its_lock(server: Server) -> None:
    victim = admin_nc(server)
    victim.lock("candidate")
    with admin_nc(server) as killer:
        killer.kill_session(victim.session_id)
        killer.lock("candidate")  # released before kill-session was answered (RFC 6241 7.9)
        killer.unlock("candidate")


def test_confirmed_commit_timeout_rolls_back_and_confirm_keeps(server: Server) -> None:
    with admin_nc(server) as m:
        m.edit_config(target="candidate", config=config("<entry><id>60</id><name>c</name></entry>"))
        m.commit(confirmed=True, timeout="1")
        assert "60" in bench(m)
        wait_until(
            "the unconfirmed commit rolled back", lambda: "60" not in bench(m), timeout=WAIT_S
        )
        m.edit_config(target="candidate", config=config("<entry><id>61</id><name>c</name></entry>"))
        m.commit(confirmed=True, timeout="2")
        m.commit()
        # Proof that 61's two seconds have passed: a later 3 s confirmed commit rolls back.
        m.edit_config(target="candidate", config=config("<entry><id>62</id><name>c</name></entry>"))
        m.commit(confirmed=True, timeout="3")
        wait_until("the later commit rolled back", lambda: "62" not in bench(m), timeout=WAIT_S)
        assert "61" in bench(m)


def test_persistent_confirmed_commit_and_cancel(server: Server) -> None:
    with admin_nc(server) as m:
        m.edit_config(target="candidate", config=config("<entry><id>70</id><name>p</name></entry>"))
        m.commit(confirmed=True, timeout="60", persist="token-1")
    with admin_nc(server) as other:
        assert "70" in bench(other)  # survived the session
        with pytest.raises(RPCError):
            other.cancel_commit(persist_id="wrong")
        other.cancel_commit(persist_id="token-1")
        assert "70" not in bench(other)


def test_bad_input_gets_errors_and_the_server_keeps_serving(server: Server) -> None:
    with admin_session(server) as raw:
        assert error_tags(raw.send(b"<rpc message-id='1' <<<")) == ["malformed-message"]
        no_id = etree.Element(NC + "rpc")
        etree.SubElement(no_id, NC + "get")
        assert error_tags(raw.send(etree.tostring(no_id))) == ["missing-attribute"]
        unknown = etree.Element("{urn:nope}frobnicate")
        assert error_tags(raw.rpc(unknown)) == ["unknown-namespace"]
        raw.send_raw(b"\n#zz\n<rpc/>\n##\n")  # broken chunk framing: the session ends
        with pytest.raises((EOFError, OSError)):
            drain(raw)
    with admin_nc(server) as m:
        assert "1" in bench(m)
