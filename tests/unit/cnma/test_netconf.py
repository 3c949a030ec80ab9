"""The NETCONF form of the C-NMA's RPCs, through the southbound codec (RFC 6241 4.1)."""

from __future__ import annotations

from datetime import UTC, datetime

from lxml import etree

from agents.cnma.config import CnmaConfig, DelayUnit
from agents.cnma.paths import network_service_table
from agents.cnma.report import MODULE, OPERATION, Metadata, Plan, ReportType, network_report
from controller.model import Encoding, InstanceKind, Schema
from controller.selection.units import Micros
from controller.southbound import RpcCodec

SM_NS = f"urn:ietf:params:xml:ns:yang:{MODULE}"


def test_report_as_xml_validates(example: CnmaConfig, schema: Schema) -> None:
    table = network_service_table(example.topology, example.policy)
    meta = Metadata(datetime(2026, 11, 30, tzinfo=UTC), Micros(1000), "cnma")
    report = Plan(ReportType.FULL, tuple(table.values()))
    members = network_report(5, datetime(2026, 11, 30, tzinfo=UTC), report, DelayUnit.US, meta)
    element = RpcCodec(schema.context).request(f"{MODULE}:{OPERATION}", members)
    text = etree.tostring(element).decode()
    schema.validate(text, InstanceKind.RPC, Encoding.XML)
    assert element.tag == f"{{{SM_NS}}}{OPERATION}"
    paths = element.findall(f"{{{SM_NS}}}path")
    assert [p.findtext(f"{{{SM_NS}}}delay-us") for p in paths] == ["8000", "6000"]
    assert paths[0].findtext(f"{{{SM_NS}}}path-attributes/{{{SM_NS}}}hop-count") == "2"


def test_reply_leaves(schema: Schema) -> None:
    codec = RpcCodec(schema.context)
    reply = (
        '<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1">'
        f'<accepted-entries xmlns="{SM_NS}">2</accepted-entries></rpc-reply>'
    )
    assert codec.reply(f"{MODULE}:{OPERATION}", reply) == {"accepted-entries": 2}
    ok = '<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><ok/></rpc-reply>'
    assert codec.reply(f"{MODULE}:{OPERATION}", ok) == {}
