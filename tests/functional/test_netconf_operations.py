"""NETCONF operations end to end on a real ``catsctl serve``: error-option, default-operation
none, copy-config, delete-config, with-defaults (RFC 6243), get-data and edit-data (RFC 8526),
get-schema (RFC 6022) and the modelled RPC of a plugin."""

from __future__ import annotations

from collections.abc import Iterator

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
    only_error,
    operation,
)
from tests.functional.restconf_server import Server, small_bench

pytestmark = pytest.mark.functional
RCT = "urn:example:rc-test"
NMDA = "urn:ietf:params:xml:ns:yang:ietf-netconf-nmda"
DS = "urn:ietf:params:xml:ns:yang:ietf-datastores"
WD = "urn:ietf:params:xml:ns:yang:ietf-netconf-with-defaults"
WD_ATTR = "{urn:ietf:params:xml:ns:netconf:default:1.0}default"
ORIGIN = "{urn:ietf:params:xml:ns:yang:ietf-origin}origin"
MON = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"


SERVE_ARGS = ("--plugin", "tests.functional.plugins.rc_test_plugin")


def seed() -> dict[str, object]:
    """The admin, a small bench-list and rc-test's top (mtu left to its default)."""
    document = small_bench()
    document["rc-test:top"] = {"name": "top"}
    return document


@pytest.fixture
def session(server: Server) -> Iterator[RawSession]:
    """A raw base:1.1 session as the admin."""
    with admin_session(server) as raw:
        yield raw


def ids(session: RawSession, datastore: str = "running") -> list[int]:
    """The bench entry ids of a datastore."""
    reply = ok(session.rpc(on_datastore(operation("get-config"), "source", datastore)))
    return sorted(int(node.text) for node in reply.iter(f"{{{BENCH_NS}}}id"))


def entry(key: int, name: str | None = "x", op: str | None = None) -> str:
    """A bench entry in XML (``op``: its nc:operation)."""
    attribute = f' nc:operation="{op}"' if op else ""
    leaf = f"<name>{name}</name>" if name is not None else ""
    return f"<entry{attribute}><id>{key}</id>{leaf}</entry>"


# ---------------------------------------------------------------- error-option (RFC 6241 7.2)

FAILING = entry(100) + entry(1, op="create") + entry(101)  # the second point is data-exists


def test_stop_on_error_keeps_the_points_before_the_error(session: RawSession) -> None:
    item = only_error(session.rpc(bench_edit(FAILING, error_option="stop-on-error")))
    assert item["tag"] == "data-exists"
    assert ids(session) == [1, 100]


def test_stop_on_error_is_the_default(session: RawSession) -> None:
    body = entry(110) + entry(1, op="create") + entry(111)
    assert only_error(session.rpc(bench_edit(body)))["tag"] == "data-exists"
    assert 110 in ids(session)
    assert 111 not in ids(session)


def test_continue_on_error_applies_the_rest_and_reports_every_error(session: RawSession) -> None:
    body = entry(120) + entry(1, op="create") + entry(121, name=None) + entry(122)
    items = error_items(session.rpc(bench_edit(body, error_option="continue-on-error")))
    assert [item["tag"] for item in items] == ["data-exists", "missing-element"]
    assert {120, 122} <= set(ids(session))
    assert 121 not in ids(session)


def test_rollback_on_error_restores_the_start_state(session: RawSession) -> None:
    before = ids(session)
    body = entry(130) + entry(1, op="create") + entry(131)
    item = only_error(session.rpc(bench_edit(body, error_option="rollback-on-error")))
    assert item["tag"] == "data-exists"
    assert ids(session) == before


def test_points_that_need_each_other_succeed_together(session: RawSession) -> None:
    body = "<entry><id>140</id><name>y</name><target>t2</target></entry>"
    body += "<target><name>t2</name></target>"
    ok(session.rpc(bench_edit(body)))  # the entry's leafref is satisfied by the later point
    assert 140 in ids(session)


def test_default_operation_none_needs_the_ancestors(session: RawSession) -> None:
    missing = '<entry><id>150</id><name nc:operation="merge">n</name></entry>'
    item = only_error(session.rpc(bench_edit(missing, default_operation="none")))
    assert (item["type"], item["tag"]) == ("application", "data-missing")
    assert 150 not in ids(session)
    present = '<entry><id>1</id><name nc:operation="merge">uno</name></entry>'
    ok(session.rpc(bench_edit(present, default_operation="none")))
    names = session.rpc(on_datastore(operation("get-config"), "source", "running"))
    assert "uno" in [node.text for node in names.iter(f"{{{BENCH_NS}}}name")]


# ---------------------------------------------------------------- copy-config, delete-config


def test_copy_config_between_datastores_and_inline(session: RawSession) -> None:
    copy = on_datastore(
        on_datastore(operation("copy-config"), "target", "startup"), "source", "running"
    )
    ok(session.rpc(copy))
    assert ids(session, "startup") == ids(session, "running")
    ok(session.rpc(bench_edit(entry(160), target="candidate")))
    assert 160 in ids(session, "candidate")
    back = on_datastore(
        on_datastore(operation("copy-config"), "target", "candidate"), "source", "startup"
    )
    ok(session.rpc(back))
    assert ids(session, "candidate") == ids(session, "startup")
    inline = on_datastore(operation("copy-config"), "target", "candidate")
    config = etree.fromstring(
        f'<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><bench xmlns="{BENCH_NS}">'
        "<entry><id>7</id><name>seven</name></entry></bench></config>"
    )
    etree.SubElement(inline, NC + "source").append(config)
    ok(session.rpc(inline))
    assert ids(session, "candidate") == [7]
    ok(session.rpc(operation("discard-changes")))


def test_delete_config_startup(session: RawSession) -> None:
    ok(session.rpc(on_datastore(operation("delete-config"), "target", "startup")))
    assert ids(session, "startup") == []
    copy = on_datastore(
        on_datastore(operation("copy-config"), "target", "startup"), "source", "running"
    )
    ok(session.rpc(copy))
    assert ids(session, "startup") == ids(session)


# ---------------------------------------------------------------- with-defaults (RFC 6243)


def mtu(session: RawSession, mode: str, datastore: str = "running") -> list[Element]:
    """The mtu leaves a get-config with ``mode`` returns."""
    request = on_datastore(operation("get-config"), "source", datastore)
    etree.SubElement(request, f"{{{WD}}}with-defaults", nsmap={None: WD}).text = mode
    return list(ok(session.rpc(request)).iter(f"{{{RCT}}}mtu"))


def test_with_defaults_modes(session: RawSession) -> None:
    assert [leaf.text for leaf in mtu(session, "report-all")] == ["1500"]
    tagged = mtu(session, "report-all-tagged")
    assert [(leaf.text, leaf.get(WD_ATTR)) for leaf in tagged] == [("1500", "true")]
    assert mtu(session, "trim") == []
    assert mtu(session, "explicit") == []
    body = f'<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><top xmlns="{RCT}">'
    body += "<mtu>1500</mtu></top></config>"
    edit = on_datastore(operation("edit-config"), "target", "candidate")
    edit.append(etree.fromstring(body))
    ok(session.rpc(edit))
    assert [leaf.text for leaf in mtu(session, "explicit", "candidate")] == ["1500"]
    assert mtu(session, "trim", "candidate") == []
    ok(session.rpc(operation("discard-changes")))


# ---------------------------------------------------------------- NMDA (RFC 8526)


def get_data(session: RawSession, datastore: str, *extra: Element) -> Element:
    """get-data of rc-test's top from a datastore."""
    request = operation("get-data", NMDA)
    etree.SubElement(request, f"{{{NMDA}}}datastore", nsmap={"ds": DS}).text = f"ds:{datastore}"
    etree.SubElement(request, f"{{{NMDA}}}subtree-filter").append(
        etree.Element(f"{{{RCT}}}top", nsmap={None: RCT})
    )
    for element in extra:
        request.append(element)
    return ok(session.rpc(request))


def test_get_data_and_edit_data_on_every_datastore(session: RawSession) -> None:
    for datastore in ("running", "candidate", "startup"):
        edit = operation("edit-data", NMDA)
        etree.SubElement(edit, f"{{{NMDA}}}datastore", nsmap={"ds": DS}).text = f"ds:{datastore}"
        config = etree.SubElement(edit, f"{{{NMDA}}}config")
        top = etree.SubElement(config, f"{{{RCT}}}top", nsmap={None: RCT})
        etree.SubElement(top, f"{{{RCT}}}name").text = f"via-{datastore}"
        ok(session.rpc(edit))
        found = get_data(session, datastore).findtext(f".//{{{RCT}}}name")
        assert found == f"via-{datastore}"
    ok(session.rpc(operation("discard-changes")))
    origin = etree.Element(f"{{{NMDA}}}with-origin")
    operational = get_data(session, "operational", origin)
    name = operational.find(f".//{{{RCT}}}name")
    assert name is not None
    assert name.text == "via-running"
    origins = [node.get(ORIGIN) for node in operational.iter() if node.get(ORIGIN)]
    assert origins
    assert all(value.endswith(("intended", "system", "default", "learned")) for value in origins)
    counters = operational.find(f".//{{{RCT}}}counters")
    assert counters is not None  # state data is operational only


def test_get_data_with_origin_is_operational_only(session: RawSession) -> None:
    request = operation("get-data", NMDA)
    etree.SubElement(request, f"{{{NMDA}}}datastore", nsmap={"ds": DS}).text = "ds:running"
    etree.SubElement(request, f"{{{NMDA}}}with-origin")
    assert only_error(session.rpc(request))["tag"] == "invalid-value"


# ---------------------------------------------------------------- get-schema, modelled RPCs


def test_get_schema_of_a_loaded_module_and_of_an_unknown_one(session: RawSession) -> None:
    reply = ok(session.rpc(operation("get-schema", MON, identifier="rc-test", format="yang")))
    text = reply.findtext(f"{{{MON}}}data") or ""
    assert text.lstrip().startswith("module rc-test")
    unknown = only_error(session.rpc(operation("get-schema", MON, identifier="no-such-module")))
    assert unknown["tag"] == "invalid-value"


def test_modelled_rpc_goes_to_the_plugin_handler(session: RawSession) -> None:
    reply = ok(session.rpc(operation("ping", RCT, message="hello")))
    assert reply.findtext(f"{{{RCT}}}echo") == "hello"
    refused = only_error(session.rpc(operation("ping", RCT, message="refuse")))
    assert refused["tag"] == "resource-denied"
