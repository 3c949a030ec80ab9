"""Every RFC 6241 Appendix A error-tag, provoked over a real NETCONF session of ``catsctl serve``.

Each test checks the error-tag, its error-type and, where Appendix A names one, its error-info.

- ``access-denied`` comes from ``catsctl serve --read-only-group readers``: the rule-list it
  puts first in running denies the members of that NACM group every write (RFC 8341); a
  denied data write is an ``application`` error, a denied operation a ``protocol`` one.
- ``resource-denied`` is the session bound (``--netconf-max-sessions``) of a second server.
- ``rollback-failed``: rollback-on-error never needs a rollback here (an edit is one
  transaction that is made current only when all of it succeeded) and discard-changes only
  copies running, so the one rollback that can fail is a confirmed commit's. The test plugin
  ``netconf_plugin`` refuses to let running lose a ``sticky`` entry, so ``cancel-commit``
  cannot put running back and must say so.
- ``partial-operation`` is obsolete (RFC 6241 Appendix A: "SHOULD NOT be sent by servers
  conforming to this document"); continue-on-error reports each failed point's own error
  instead, which the last test checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lxml import etree

from controller.netconf.messages import NC
from controller.types import Element
from tests.functional.netconf_client import (
    RawSession,
    bench_edit,
    connect_nc,
    error_items,
    only_error,
    operation,
)
from tests.functional.restconf_server import (
    ADMIN,
    Server,
    admin_policy,
    seeded_server,
    small_bench,
)

pytestmark = pytest.mark.functional
BL = "urn:example:bench-list"
RCT = "urn:example:rc-test"
NC_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
READER = ("reader", ADMIN[1])
PLUGINS = ("tests.functional.plugins.rc_test_plugin", "tests.functional.netconf_plugin")


SERVE_ARGS = (
    *[arg for name in PLUGINS for arg in ("--plugin", name)],
    "--read-only-group",
    "readers",
)


def seed() -> dict[str, object]:
    """The admin, a reader in the read-only group, bench-list and an rc-test link."""
    document: dict[str, Any] = small_bench()
    users = document["ietf-system:system"]["authentication"]["user"]
    users.append({"name": READER[0], "password": users[0]["password"]})
    document.update(admin_policy(readers=[READER[0]]))
    document["rc-test:top"] = {"link": [{"from": "a", "to": "b", "speed": 1}]}
    return document


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that takes two sessions and messages of at most 64 KiB."""
    folder = tmp_path_factory.mktemp("netconf-bounded")
    extra = ("--netconf-max-sessions", "2", "--netconf-max-message-size", "65536")
    with seeded_server(folder, seed(), *extra) as running:
        yield running


def raw(server: Server, user: tuple[str, str] = ADMIN) -> RawSession:
    """A raw base:1.1 session."""
    return RawSession(server.netconf_port, *user)


@pytest.mark.parametrize(
    ("body", "tag", "info"),
    [
        ("<entry><id>1</id><weight>5000</weight></entry>", "invalid-value", {}),
        ('<entry nc:operation="create"><id>1</id><name>x</name></entry>', "data-exists", {}),
        ('<entry nc:operation="delete"><id>99</id></entry>', "data-missing", {}),
        ("<entry><id>20</id></entry>", "missing-element", {}),
        ("<nothing/>", "unknown-element", {"info/bad-element": "nothing"}),
    ],
)
def test_application_errors_of_edit_config(
    server: Server, body: str, tag: str, info: dict[str, str]
) -> None:
    with raw(server) as session:
        item = only_error(session.rpc(bench_edit(body)))
    assert (item["type"], item["tag"]) == ("application", tag)
    assert info.items() <= item.items()


def test_bad_and_unknown_attributes(server: Server) -> None:
    with raw(server) as session:
        bad = only_error(session.rpc(bench_edit('<entry nc:operation="bogus"><id>1</id></entry>')))
        body = '<entry nc:bogus="1"><id>1</id><name>x</name></entry>'
        unknown = only_error(session.rpc(bench_edit(body)))
    assert (bad["type"], bad["tag"]) == ("protocol", "bad-attribute")
    assert (bad["info/bad-attribute"], bad["info/bad-element"]) == ("operation", "entry")
    assert (unknown["type"], unknown["tag"]) == ("protocol", "unknown-attribute")
    assert (unknown["info/bad-attribute"], unknown["info/bad-element"]) == ("bogus", "entry")


def test_missing_attribute_and_malformed_message(server: Server) -> None:
    with raw(server) as session:
        no_id = etree.Element(NC + "rpc")
        etree.SubElement(no_id, NC + "get")
        missing = only_error(session.send(etree.tostring(no_id)))
        malformed = only_error(session.send(b"<rpc message-id='1' <<<"))
    assert (missing["type"], missing["tag"]) == ("rpc", "missing-attribute")
    assert (missing["info/bad-attribute"], missing["info/bad-element"]) == ("message-id", "rpc")
    assert (malformed["type"], malformed["tag"]) == ("rpc", "malformed-message")


def test_missing_and_bad_elements_of_protocol_operations(server: Server) -> None:
    with raw(server) as session:
        missing = only_error(session.rpc(operation("get-config")))
        bad = only_error(session.rpc(operation("kill-session", session_id="abc")))
    assert (missing["type"], missing["tag"], missing["info/bad-element"]) == (
        "protocol",
        "missing-element",
        "source",
    )
    assert (bad["type"], bad["tag"], bad["info/bad-element"]) == (
        "protocol",
        "bad-element",
        "session-id",
    )


def test_unknown_namespace(server: Server) -> None:
    with raw(server) as session:
        item = only_error(session.rpc(operation("frobnicate", "urn:nope")))
    assert item["tag"] == "unknown-namespace"
    assert item["type"] in ("protocol", "application")
    assert (item["info/bad-element"], item["info/bad-namespace"]) == ("frobnicate", "urn:nope")


def test_access_denied_for_a_read_only_group(server: Server) -> None:
    with raw(server, READER) as session:
        item = only_error(session.rpc(bench_edit("<entry><id>1</id><name>renamed</name></entry>")))
        source = operation("get-config")
        etree.SubElement(etree.SubElement(source, NC + "source"), NC + "running")
        data = session.rpc(source)
    assert (item["type"], item["tag"]) == ("application", "access-denied")
    assert data.findtext(f"{NC}data/{{{BL}}}bench/{{{BL}}}entry/{{{BL}}}name") == "one"


def test_lock_denied_names_the_holder(server: Server) -> None:
    lock = operation("lock")
    etree.SubElement(etree.SubElement(lock, NC + "target"), NC + "candidate")
    with raw(server) as holder, raw(server) as other:
        assert error_items(holder.rpc(lock)) == []
        item = only_error(other.rpc(lock))
    assert (item["type"], item["tag"]) == ("protocol", "lock-denied")
    assert item["info/session-id"] == str(holder.session_id)


def reset(reason: str) -> Element:
    """``<action>`` rc-test:top/link[a,b]/reset (RFC 7950 7.15.2)."""
    return etree.fromstring(
        f'<action xmlns="urn:ietf:params:xml:ns:yang:1"><top xmlns="{RCT}"><link>'
        f"<from>a</from><to>b</to><reset><reason>{reason}</reason></reset></link></top></action>"
    )


def test_in_use_from_an_action_handler(server: Server) -> None:
    with raw(server) as session:
        item = only_error(session.rpc(reset("locked")))
        done = session.rpc(reset("maintenance"))
    assert (item["type"], item["tag"]) == ("application", "in-use")
    assert done.findtext(f"{{{RCT}}}done") == "true", etree.tostring(done)


def test_operation_failed_and_operation_not_supported(server: Server) -> None:
    delete = operation("delete-config")
    etree.SubElement(etree.SubElement(delete, NC + "target"), NC + "running")
    with raw(server) as session:
        failed = only_error(session.rpc(operation("ping", RCT, message="crash")))
        unsupported = only_error(session.rpc(delete))
    assert (failed["type"], failed["tag"]) == ("application", "operation-failed")
    assert unsupported["tag"] == "operation-not-supported"
    assert unsupported["type"] in ("protocol", "application")


def test_rollback_failed_when_the_confirmed_commit_cannot_be_undone(server: Server) -> None:
    with connect_nc(server.netconf_port, *ADMIN) as m:
        sticky = f'<config xmlns="{NC_NS}"><bench xmlns="{BL}"><entry><id>66</id>'
        sticky += "<name>sticky</name></entry></bench></config>"
        m.edit_config(target="candidate", config=sticky)
        m.commit(confirmed=True, timeout="60", persist="p-66")
    with raw(server) as session:
        item = only_error(session.rpc(operation("cancel-commit", persist_id="p-66")))
        source = operation("get-config")
        etree.SubElement(etree.SubElement(source, NC + "source"), NC + "running")
        names = [e.text for e in session.rpc(source).iter(f"{{{BL}}}name")]
    assert (item["type"], item["tag"]) == ("application", "rollback-failed")
    assert "sticky" in names  # the commit stays: the error says so instead of hiding it


def test_too_big_ends_the_session(bounded: Server) -> None:
    with RawSession(bounded.netconf_port, *ADMIN) as session:
        rpc = etree.Element(NC + "rpc", nsmap={None: NC_NS})
        rpc.set("message-id", "big")
        etree.SubElement(rpc, NC + "get").text = "x" * 70_000
        item = only_error(session.send(etree.tostring(rpc)))
        with pytest.raises((EOFError, OSError)):
            session.receive()
    assert (item["type"], item["tag"]) == ("rpc", "too-big")


def test_resource_denied_past_the_session_bound(bounded: Server) -> None:
    opened: list[RawSession] = []
    try:
        denied: dict[str, str] | None = None
        for _ in range(6):  # sessions of earlier tests may still be ending
            session = RawSession(bounded.netconf_port, *ADMIN)
            opened.append(session)
            items = error_items(session.rpc(operation("get")))
            if items:
                denied = items[0]
                break
        assert denied is not None
        assert (denied["type"], denied["tag"]) == ("protocol", "resource-denied")
        assert len(opened) <= 3
    finally:
        for session in opened:
            session.close()


def test_continue_on_error_reports_each_error_never_partial_operation(server: Server) -> None:
    body = (
        "<entry><id>90</id><name>kept</name></entry>"
        '<entry nc:operation="create"><id>1</id><name>x</name></entry>'
        '<entry nc:operation="delete"><id>98</id></entry>'
    )
    with raw(server) as session:
        items = error_items(session.rpc(bench_edit(body, error_option="continue-on-error")))
    assert [item["tag"] for item in items] == ["data-exists", "data-missing"]
    assert all(item["type"] == "application" for item in items)
