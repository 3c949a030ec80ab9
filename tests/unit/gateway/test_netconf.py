"""The NETCONF read of a session: the subtree filter, and ``<data>`` to RFC 7951 members."""

from __future__ import annotations

import pytest
from lxml import etree

from agents.gateway.netconf import NAMESPACE, session_filter, session_of
from controller.model import ModelError, Schema

NC = "urn:ietf:params:xml:ns:netconf:base:1.0"


def data(inner: str) -> etree._Element:
    return etree.fromstring(f'<data xmlns="{NC}">{inner}</data>')


def test_the_filter_selects_one_session_by_its_key() -> None:
    top = session_filter("s-1")
    assert etree.QName(top).namespace == NAMESPACE
    assert [etree.QName(e).localname for e in top.iter()] == [
        "agent-selection",
        "sessions",
        "session",
        "session-id",
    ]
    assert top.findtext(f".//{{{NAMESPACE}}}session-id") == "s-1"


def test_a_session_in_data_reads_as_the_restconf_client_reads_it(schema: Schema) -> None:
    inner = (
        f'<agent-selection xmlns="{NAMESPACE}"><sessions><session>'
        "<session-id>s-1</session-id><tenant>t</tenant><service-id>agent</service-id>"
        "<state>running</state><decision-record><record-id>1</record-id>"
        "<outcome>keep</outcome><selected>C</selected></decision-record>"
        "</session></sessions></agent-selection>"
    )
    found = session_of(schema.context.cdata, data(inner))
    assert found is not None
    assert (found["session-id"], found["state"]) == ("s-1", "running")
    (record,) = found["decision-record"]
    assert (record["record-id"], record["outcome"], record["selected"]) == (
        "1",
        "ietf-cats-agent-selection:keep",
        "C",
    )


def test_empty_data_is_no_session_and_foreign_data_is_refused(schema: Schema) -> None:
    assert session_of(schema.context.cdata, data("")) is None
    with pytest.raises(ModelError):
        session_of(schema.context.cdata, data('<nothing xmlns="urn:x"/>'))
