"""RpcCodec: RFC 7951 members to the NETCONF operation element and back, checked by libyang."""

from __future__ import annotations

import pytest
from lxml import etree

from controller.errors import CatsError
from controller.model import Schema
from controller.southbound import RpcCodec

AS = "ietf-cats-agent-selection"
NS = f"urn:ietf:params:xml:ns:yang:{AS}"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
RESERVE = f"{AS}:reserve-state"
MEMBERS = {
    "reservation-id": "r1",
    "session-id": "s-1",
    "tenant": "t-1",
    "csci-id": "B",
    "element": [{"reuse-key": "ctx", "element-class": f"{AS}:model-context-state"}],
    "size": "7500000000",
    "needed-by": "2026-11-30T10:00:00Z",
}


def test_a_request_declares_the_prefix_of_its_identityref_values_on_the_operation(
    schema: Schema,
) -> None:
    element = RpcCodec(schema.context).request(RESERVE, MEMBERS)
    rpc = etree.Element(f"{{{NC}}}rpc")
    rpc.append(element)  # as ncclient re-parents it
    text = etree.tostring(rpc).decode()
    reparsed = etree.fromstring(text.encode())
    (cls,) = reparsed.iter(f"{{{NS}}}element-class")
    prefix, _, name = (cls.text or "").partition(":")
    assert (cls.nsmap[prefix], name) == (NS, "model-context-state")


def test_an_invalid_request_is_refused_before_anything_is_sent(schema: Schema) -> None:
    with pytest.raises(CatsError):
        RpcCodec(schema.context).request(RESERVE, {**MEMBERS, "size": "-1"})


def test_a_reply_becomes_output_members_with_module_qualified_identities(schema: Schema) -> None:
    reply = (
        f'<rpc-reply xmlns="{NC}" xmlns:x="{NS}" message-id="1">'
        f'<reservation-id xmlns="{NS}">r1</reservation-id><status xmlns="{NS}">refused</status>'
        f'<refusal-reason xmlns="{NS}">x:insufficient-storage</refusal-reason></rpc-reply>'
    )
    assert RpcCodec(schema.context).reply(RESERVE, reply) == {
        "reservation-id": "r1",
        "status": "refused",
        "refusal-reason": f"{AS}:insufficient-storage",
    }


def test_an_ok_reply_has_no_output_and_a_bad_reply_is_refused(schema: Schema) -> None:
    codec = RpcCodec(schema.context)
    assert codec.reply(f"{AS}:release-state", f'<rpc-reply xmlns="{NC}"><ok/></rpc-reply>') == {}
    bad = f'<rpc-reply xmlns="{NC}"><status xmlns="{NS}">maybe</status></rpc-reply>'
    with pytest.raises(CatsError):
        codec.reply(RESERVE, bad)
