"""Issue 15 over NETCONF: the RFC behaviours real clients rely on, against ``catsctl serve``.

The module ``tests/yang/conform-test`` holds each shape (default-only nodes, an
identityref-keyed list, anyxml, anydata, a mandatory choice, unique, a feature) and
``tests/yang/legacy-test`` is a YANG 1.0 module. The server enables ``conform-test:fancy``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from controller.netconf.messages import NC
from controller.types import Element
from tests.functional.netconf_client import (
    RawSession,
    admin_session,
    error_items,
    ok,
    on_datastore,
    only_error,
    operation,
)
from tests.functional.restconf_server import Server, admin_users, seeded_server

pytestmark = pytest.mark.functional
CF = "urn:example:conform-test"
NC_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
NCM = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
YANG_NS = "urn:ietf:params:xml:ns:yang:1"
SERVE_ARGS = (
    *("--plugin", "tests.functional.plugins.rc_test_plugin"),
    *("--feature", "conform-test:fancy"),
)


def seed() -> dict[str, object]:
    """The admin and a box with a label, a host and a default-only rest."""
    document = admin_users()
    document["conform-test:box"] = {"label": "seeded", "host": [{"name": "a", "addr": "1"}]}
    return document


@pytest.fixture
def session(server: Server) -> Iterator[RawSession]:
    """A raw NETCONF session as the admin."""
    with admin_session(server) as opened:
        yield opened


def edit(body: str, target: str = "running", **params: str) -> Element:
    """An edit-config of ``<box>`` holding ``body`` (prefixes ``nc`` and ``cf`` declared)."""
    element = on_datastore(operation("edit-config", **params), "target", target)
    element.append(
        etree.fromstring(
            f'<config xmlns="{NC_NS}" xmlns:nc="{NC_NS}" xmlns:cf="{CF}">'
            f'<box xmlns="{CF}">{body}</box></config>'
        )
    )
    return element


def get_config(
    session: RawSession, body: str = "", source: str = "running", **extra: str
) -> Element:
    """The ``<box>`` of a get-config (with a subtree filter of ``<box>`` holding ``body``)."""
    element = on_datastore(operation("get-config"), "source", source)
    holder = etree.SubElement(element, NC + "filter")
    holder.append(etree.fromstring(f'<box xmlns="{CF}">{body}</box>'))
    for name, value in extra.items():
        wd = "urn:ietf:params:xml:ns:yang:ietf-netconf-with-defaults"
        etree.SubElement(element, f"{{{wd}}}{name.replace('_', '-')}").text = value
    data = ok(session.rpc(element)).find(NC + "data")
    assert data is not None
    box = data.find(f"{{{CF}}}box")
    return box if box is not None else etree.Element(f"{{{CF}}}box")


def texts(box: Element, path: str) -> list[str]:
    """Texts of the elements at ``path`` (local names joined by ``/``) under ``box``."""
    steps = "/".join(f"{{{CF}}}{step}" for step in path.split("/"))
    return [(found.text or "").strip() for found in box.findall(steps)]


# ------------------------------------------------------------------ 1: default-only nodes


def test_create_of_a_default_only_leaf_or_container_succeeds(session: RawSession) -> None:
    ok(session.rpc(edit('<colour nc:operation="create">blue</colour>')))
    ok(session.rpc(edit('<inner nc:operation="create"><note>n</note></inner>')))
    ok(session.rpc(edit('<sized nc:operation="create"><extra>e</extra></sized>')))
    box = get_config(session)
    assert texts(box, "colour") == ["blue"]
    assert texts(box, "inner/note") == ["n"]
    assert texts(box, "sized/extra") == ["e"]
    refused = only_error(session.rpc(edit('<colour nc:operation="create">red</colour>')))
    assert refused["tag"] == "data-exists"  # now it exists
    ok(session.rpc(edit('<colour nc:operation="delete"/>')))


def test_delete_of_an_unset_default_leaf_is_data_missing(session: RawSession) -> None:
    error = only_error(session.rpc(edit('<colour nc:operation="delete"/>')))
    assert error["tag"] == "data-missing"
    ok(session.rpc(edit('<colour nc:operation="remove"/>')))  # remove: no error


# ------------------------------------------------------------------ 2: prefixed key values


def test_identityref_keyed_list_and_leaf_lists_over_netconf(session: RawSession) -> None:
    ok(session.rpc(edit("<port><proto>cf:tcp</proto><number>80</number><label>w</label></port>")))
    message = (  # sent as text: lxml drops a declaration only a value uses when it moves
        f'<rpc message-id="2" xmlns="{NC_NS}"><edit-config><target><running/></target>'
        f'<config><box xmlns="{CF}"><port xmlns:t="{CF}"><proto>t:udp</proto>'
        f'<number>53</number></port><kinds xmlns:k="{CF}">k:udp</kinds>'
        f'<ref xmlns:p="{CF}">/p:box/p:label</ref></box></config></edit-config></rpc>'
    )
    ok(session.send(message.encode()))
    label = '<label nc:operation="merge">web</label>'
    merge = f"<port><proto>cf:tcp</proto><number>80</number>{label}</port>"
    ok(session.rpc(edit(merge)))
    box = get_config(session, "<port/><kinds/><ref/>")
    assert sorted(texts(box, "port/number")) == ["53", "80"]
    assert texts(box, "port/label") == ["web"]  # the entry keyed tcp was found again
    assert len(texts(box, "kinds")) == 1
    assert len(texts(box, "ref")) == 1
    ok(
        session.rpc(
            edit('<port nc:operation="delete"><proto>cf:udp</proto><number>53</number></port>')
        )
    )
    ok(session.rpc(edit('<kinds nc:operation="delete">cf:udp</kinds>')))
    ok(session.rpc(edit('<ref nc:operation="delete">/cf:box/cf:label</ref>')))
    ok(
        session.rpc(
            edit('<port nc:operation="delete"><proto>cf:tcp</proto><number>80</number></port>')
        )
    )
    box = get_config(session, "<port/><kinds/><ref/>")
    assert texts(box, "port") + texts(box, "kinds") + texts(box, "ref") == []


# ------------------------------------------------------------------ 3: anyxml, anydata


def test_anyxml_and_anydata_content_is_a_value(session: RawSession) -> None:
    ok(session.rpc(edit('<blob><anything xmlns="urn:example:elsewhere"><b/></anything></blob>')))
    ok(session.rpc(edit("<bag><label>in-the-bag</label></bag>")))
    box = get_config(session, "<blob/><bag/>")
    assert box.find(f"{{{CF}}}blob/{{urn:example:elsewhere}}anything") is not None
    assert texts(box, "bag/label") == ["in-the-bag"]
    ok(session.rpc(edit('<blob nc:operation="delete"/><bag nc:operation="delete"/>')))


# ------------------------------------------------------------------ 4: legacy discovery


def test_hello_announces_yang_1_0_modules_as_module_capabilities(session: RawSession) -> None:
    announced = [c.text or "" for c in session.server_hello.iter(NC + "capability")]
    assert "urn:example:legacy-test?module=legacy-test&revision=2026-12-02" in announced
    system = [c for c in announced if c.startswith("urn:ietf:params:xml:ns:yang:ietf-system?")]
    assert system == [
        "urn:ietf:params:xml:ns:yang:ietf-system?module=ietf-system&revision=2014-08-06"
        "&features=authentication,local-users"
    ]
    assert not [c for c in announced if "module=conform-test" in c]  # 1.1: yang-library only


def test_get_serves_rfc_7895_modules_state(session: RawSession) -> None:
    lib = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
    element = operation("get")
    etree.SubElement(element, NC + "filter").append(etree.Element(f"{{{lib}}}modules-state"))
    state = ok(session.rpc(element)).find(f"{NC}data/{{{lib}}}modules-state")
    assert state is not None
    assert len(state.findtext(f"{{{lib}}}module-set-id") or "") == 32
    legacy = [
        m for m in state.iter(f"{{{lib}}}module") if m.findtext(f"{{{lib}}}name") == "legacy-test"
    ]
    assert len(legacy) == 1
    assert legacy[0].findtext(f"{{{lib}}}conformance-type") == "implement"
    fancy = [
        m for m in state.iter(f"{{{lib}}}module") if m.findtext(f"{{{lib}}}name") == "conform-test"
    ]
    assert fancy[0].findtext(f"{{{lib}}}feature") == "fancy"


# ------------------------------------------------------------------ 5: get-schema


def test_every_listed_schema_is_served_in_yang_and_yin(session: RawSession) -> None:
    element = operation("get")
    etree.SubElement(element, NC + "filter").append(
        etree.fromstring(f'<netconf-state xmlns="{NCM}"><schemas/></netconf-state>')
    )
    listed = ok(session.rpc(element)).iter(f"{{{NCM}}}schema")
    schemas = [
        (
            s.findtext(f"{{{NCM}}}identifier"),
            s.findtext(f"{{{NCM}}}version"),
            s.findtext(f"{{{NCM}}}format"),
        )
        for s in listed
    ]
    assert ("yang", "2022-06-16", "ncm:yang") in schemas
    assert len(schemas) > 40
    for identifier, version, fmt in schemas:
        request = etree.fromstring(
            f'<get-schema xmlns="{NCM}" xmlns:ncm="{NCM}"><identifier>{identifier}</identifier>'
            f"<version>{version}</version><format>{fmt}</format></get-schema>"
        )
        text = ok(session.rpc(request)).findtext(f"{{{NCM}}}data") or ""
        if fmt == "ncm:yin":
            root = etree.fromstring(text.encode())
            assert root.tag == "{urn:ietf:params:xml:ns:yang:yin:1}module", identifier
            assert root.get("name") == identifier
        else:
            assert text.lstrip().startswith(f"module {identifier} "), identifier


# ------------------------------------------------------------------ 6, 7: filters, none


def test_xpath_filter_of_the_root_returns_everything_readable(session: RawSession) -> None:
    element = operation("get")
    etree.SubElement(element, NC + "filter", type="xpath", select="/")
    data = ok(session.rpc(element)).find(NC + "data")
    assert data is not None
    tops = {etree.QName(child).localname for child in data}
    assert {"box", "nacm", "system", "yang-library", "netconf-state"} <= tops
    assert data.find(f"{{{CF}}}box/{{{CF}}}label") is not None


def test_default_operation_none_refuses_a_level_that_does_not_exist(session: RawSession) -> None:
    missing = edit("<entry><id>404</id><speed>4</speed></entry>", default_operation="none")
    error = only_error(session.rpc(missing))
    assert error["tag"] == "data-missing"
    merge_below = edit(
        '<entry><id>404</id><speed nc:operation="merge">4</speed></entry>',
        default_operation="none",
    )
    assert only_error(session.rpc(merge_below))["tag"] == "data-missing"
    assert texts(get_config(session, "<entry/>"), "entry/id") == []
    ok(session.rpc(edit("<host><name>a</name><addr>1</addr></host>", default_operation="none")))


# ------------------------------------------------------------------ 9: candidate defaults


def test_candidate_shows_the_defaults_validation_would(session: RawSession) -> None:
    ok(session.rpc(edit('<entry nc:operation="create"><id>1</id></entry>')))
    assert texts(
        get_config(session, "<entry/>", with_defaults="report-all"), "entry/auto-level"
    ) == ["5"]
    ok(session.rpc(edit("<entry><id>1</id><manual-level>7</manual-level></entry>", "candidate")))
    ok(session.rpc(edit('<marker nc:operation="create"/>', "candidate")))
    box = get_config(session, "<entry/><marker/>", "candidate", with_defaults="report-all")
    assert texts(box, "entry/manual-level") == ["7"]
    assert texts(box, "entry/auto-level") == []  # the default case went with its choice
    assert texts(box, "marker/weight") == ["1"]
    ok(session.rpc(operation("discard-changes")))
    ok(session.rpc(edit('<entry nc:operation="delete"><id>1</id></entry>')))


# ------------------------------------------------------------------ 10: error details


def test_non_unique_and_missing_choice_error_info(session: RawSession) -> None:
    reply = session.rpc(edit("<host><name>c</name><addr>1</addr></host>"))
    error = reply.find(f"{NC}rpc-error")
    assert error is not None
    assert error.findtext(NC + "error-app-tag") == "data-not-unique"
    unique = error.find(f"{NC}error-info/{{{YANG_NS}}}non-unique")
    assert unique is not None
    assert (
        unique.text
        == "/conform-test:box/conform-test:host[conform-test:name='c']/conform-test:addr"
    )
    assert unique.nsmap["conform-test"] == CF
    reply = session.rpc(edit("<shape><name>s</name></shape>"))
    error = reply.find(f"{NC}rpc-error")
    assert error is not None
    assert error.findtext(NC + "error-app-tag") == "missing-choice"
    assert (
        error.findtext(NC + "error-path")
        == "/conform-test:box/conform-test:shape[conform-test:name='s']"
    )
    assert error.findtext(f"{NC}error-info/{{{YANG_NS}}}missing-choice") == "kind"


def test_a_missing_insert_anchor_is_missing_instance(session: RawSession) -> None:
    body = (
        f'<top xmlns="urn:example:rc-test" xmlns:yang="{YANG_NS}" xmlns:r="urn:example:rc-test">'
        '<hop yang:insert="after" yang:key="[r:name=\'nope\']"><name>h2</name></hop></top>'
    )
    element = on_datastore(operation("edit-config"), "target", "running")
    element.append(etree.fromstring(f'<config xmlns="{NC_NS}">{body}</config>'))
    error = only_error(session.rpc(element))
    assert error["tag"] == "bad-attribute"
    assert error["info/bad-attribute"] == "key"
    reply = session.rpc(element)
    assert reply.findtext(f"{NC}rpc-error/{NC}error-app-tag") == "missing-instance"


def test_an_xpath_filter_error_names_no_unrelated_node(session: RawSession) -> None:
    element = operation("get")
    etree.SubElement(element, NC + "filter", type="xpath", select="/nothing:here")
    reply = session.rpc(element)
    assert only_error(reply)["tag"] == "invalid-value"
    assert reply.find(f"{NC}rpc-error/{NC}error-path") is None


# ------------------------------------------------------------------ 11: features


def test_a_feature_enabled_on_the_command_line_is_usable(session: RawSession) -> None:
    ok(session.rpc(edit("<fancy><level>3</level></fancy>")))
    assert texts(get_config(session, "<fancy/>"), "fancy/level") == ["3"]
    lib = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
    element = operation("get")
    etree.SubElement(
        element, NC + "filter", type="xpath", select="/yanglib:yang-library", nsmap={"yanglib": lib}
    )
    modules = ok(session.rpc(element)).iter(f"{{{lib}}}module")
    conform = [m for m in modules if m.findtext(f"{{{lib}}}name") == "conform-test"]
    assert [f.text for f in conform[0].findall(f"{{{lib}}}feature")] == ["fancy"]


# ------------------------------------------------------------------ 12: lenient reading


def test_unqualified_base_operations_are_read_as_the_base_ones(session: RawSession) -> None:
    for message_id, body in enumerate(
        (
            b"<lock><target><candidate/></target></lock>",
            b"<edit-config><target><candidate/></target><config>"
            + f'<box xmlns="{CF}"><label>plain</label></box>'.encode()
            + b"</config></edit-config>",
            b"<commit/>",
            b"<unlock><target><candidate/></target></unlock>",
        )
    ):
        message = f'<rpc message-id="{message_id}">'.encode() + body + b"</rpc>"
        reply = ok(session.send(message))
        assert reply.get("message-id") == str(message_id)
        assert reply.find(NC + "ok") is not None
    assert texts(get_config(session, "<label/>"), "label") == ["plain"]


def test_rpc_output_uses_the_module_prefix(session: RawSession) -> None:
    reply = ok(
        session.rpc(
            etree.fromstring('<ping xmlns="urn:example:rc-test"><message>hi</message></ping>')
        )
    )
    raw = etree.tostring(reply).decode()
    assert "ns0" not in raw
    assert '<rct:echo xmlns:rct="urn:example:rc-test">hi</rct:echo>' in raw


def test_close_session_ends_without_a_tcp_reset(server: Server) -> None:
    session = admin_session(server)
    try:
        ok(session.rpc(operation("close-session")))
        session.transport.join(30)  # the server closes after the client had time to
        assert not session.transport.is_active()
        assert not isinstance(session.transport.saved_exception, ConnectionResetError)
    finally:
        session.close()


def test_netconf_strict_refuses_unqualified_base_elements(tmp_path: Path) -> None:
    with (
        seeded_server(tmp_path, admin_users(), "--netconf-strict") as strict,
        admin_session(strict) as session,
    ):
        refused = session.send(b'<rpc message-id="1"><commit/></rpc>')
        assert error_items(refused)[0]["tag"] == "unknown-element"
        qualified = f'<rpc message-id="2" xmlns="{NC_NS}"><commit/></rpc>'.encode()
        assert ok(session.send(qualified)).find(NC + "ok") is not None
