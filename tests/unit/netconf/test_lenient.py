"""The lenient reading of unqualified base elements (controller.netconf.lenient)."""

from __future__ import annotations

from lxml import etree

from controller.netconf.lenient import qualify_hello, qualify_rpc
from controller.netconf.messages import NC, hello_capabilities, parse_rpc


def test_an_unqualified_rpc_and_operation_are_the_base_ones() -> None:
    root = etree.fromstring(b'<rpc message-id="1"><lock><target><running/></target></lock></rpc>')
    rpc = parse_rpc(qualify_rpc(root))
    assert rpc.operation.tag == NC + "lock"
    assert rpc.operation.find(f"{NC}target/{NC}running") is not None


def test_content_keeps_its_namespace() -> None:
    root = etree.fromstring(
        b'<rpc message-id="1"><get><filter type="subtree"><top/></filter></get></rpc>'
    )
    rpc = parse_rpc(qualify_rpc(root))
    selector = rpc.operation.find(f"{NC}filter/top")
    assert selector is not None  # a subtree filter node without a namespace matches any


def test_a_modelled_rpc_is_not_taken_for_a_base_one() -> None:
    root = etree.fromstring(b'<rpc message-id="1"><ping/></rpc>')
    assert parse_rpc(qualify_rpc(root)).operation.tag == "ping"


def test_an_unqualified_hello() -> None:
    root = etree.fromstring(
        b"<hello><capabilities><capability>urn:ietf:params:netconf:base:1.0</capability>"
        b"</capabilities></hello>"
    )
    assert hello_capabilities(qualify_hello(root)) == ("urn:ietf:params:netconf:base:1.0",)
