"""PUT, POST and PATCH bodies checked against the URI (RFC 8040 4.4-4.6, RFC 8072)."""

from __future__ import annotations

import json

import pytest

from controller.datastore.api import EditOperation, InsertWhere
from controller.errors import CatsError
from controller.model import Encoding
from controller.model.paths import PathResolver
from controller.restconf.bodies import child_body, root_body, target_body
from controller.restconf.errors import RestconfError
from controller.restconf.yang_patch import parse_patch, status_document, to_edits

LINK = '{"rc-test:link": [{"from": "a", "to": "b", "speed": 10}]}'
LINK_XML = '<link xmlns="urn:example:rc-test"><from>a</from><to>b</to><speed>1</speed></link>'


def test_put_body_matches_the_uri(resolver: PathResolver) -> None:
    target = resolver.resolve("rc-test:top/link=a,b")
    assert target_body(LINK, Encoding.JSON, target, resolver) == LINK
    assert target_body(LINK_XML, Encoding.XML, target, resolver) == LINK_XML
    unqualified = target_body(
        '{"link": [{"from": "a", "to": "b"}]}', Encoding.JSON, target, resolver
    )
    assert json.loads(unqualified) == {"rc-test:link": [{"from": "a", "to": "b"}]}


@pytest.mark.parametrize(
    ("body", "encoding", "tag"),
    [
        ('{"rc-test:link": [{"from": "a", "to": "c"}]}', Encoding.JSON, "invalid-value"),
        ('{"rc-test:hop": [{"name": "a"}]}', Encoding.JSON, "invalid-value"),
        ('{"rc-test:link": [{"from": "a"}]}', Encoding.JSON, "missing-element"),
        ('{"rc-test:link": [{"from": "a", "to": "b"', Encoding.JSON, "malformed-message"),
        ("[1, 2]", Encoding.JSON, "invalid-value"),
        ('{"rc-test:link": [{"from": {"x": 1}, "to": "b"}]}', Encoding.JSON, "invalid-value"),
        ("<link xmlns='urn:example:rc-test'><from>a</from>", Encoding.XML, "malformed-message"),
        ("<link xmlns='urn:nowhere'/>", Encoding.XML, "unknown-namespace"),
        (LINK_XML.replace("<to>b</to>", "<to>z</to>"), Encoding.XML, "invalid-value"),
    ],
)
def test_put_body_refused(resolver: PathResolver, body: str, encoding: Encoding, tag: str) -> None:
    target = resolver.resolve("rc-test:top/link=a,b")
    with pytest.raises(RestconfError) as caught:
        target_body(body, encoding, target, resolver)
    assert caught.value.status == 400
    assert caught.value.items[0].tag == tag


def test_post_names_the_child(resolver: PathResolver) -> None:
    child, body = child_body(LINK, Encoding.JSON, resolver.resolve("rc-test:top"), resolver)
    assert child.data_path == "/rc-test:top/link[from='a'][to='b']"
    assert child.api_path == "rc-test:top/link=a,b"
    assert body == LINK
    top, _ = child_body('{"rc-test:top": {}}', Encoding.JSON, resolver.resolve(""), resolver)
    assert top.data_path == "/rc-test:top"
    with pytest.raises(CatsError):
        child_body(
            '{"rc-test:nothing": {}}', Encoding.JSON, resolver.resolve("rc-test:top"), resolver
        )


def test_root_body_unwraps_data() -> None:
    assert json.loads(root_body('{"ietf-restconf:data": {"m:a": 1}}', Encoding.JSON)) == {"m:a": 1}
    xml = '<data xmlns="urn:ietf:params:xml:ns:yang:ietf-restconf"><a xmlns="urn:m"/></data>'
    assert root_body(xml, Encoding.XML) == '<a xmlns="urn:m"/>'
    with pytest.raises(RestconfError):
        root_body('{"m:a": 1}', Encoding.JSON)


def test_yang_patch_to_edits(resolver: PathResolver) -> None:
    patch = parse_patch(
        json.dumps(
            {
                "ietf-yang-patch:yang-patch": {
                    "patch-id": "p1",
                    "edit": [
                        {
                            "edit-id": "e1",
                            "operation": "insert",
                            "target": "/hop=b",
                            "where": "after",
                            "point": "/hop=a",
                            "value": {"rc-test:hop": [{"name": "b"}]},
                        },
                        {"edit-id": "e2", "operation": "remove", "target": "/name"},
                    ],
                }
            }
        ),
        Encoding.JSON,
    )
    first, second = to_edits(patch, "rc-test:top", Encoding.JSON, resolver)
    assert first.operation is EditOperation.INSERT
    assert first.path == "/rc-test:top/hop[name='b']"
    assert first.where is InsertWhere.AFTER
    assert first.point == "/rc-test:top/hop[name='a']"
    assert second.path == "/rc-test:top/name"
    assert second.value is None
    status = json.loads(status_document("p1", None, Encoding.JSON, lambda _: b""))
    assert status == {"ietf-yang-patch:yang-patch-status": {"patch-id": "p1", "ok": [None]}}


def test_yang_patch_xml(resolver: PathResolver) -> None:
    body = (
        '<yang-patch xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-patch">'
        "<patch-id>p</patch-id><edit><edit-id>1</edit-id><operation>create</operation>"
        f"<target>/link=a,b</target><value>{LINK_XML}</value></edit></yang-patch>"
    )
    (edit,) = to_edits(parse_patch(body, Encoding.XML), "rc-test:top", Encoding.XML, resolver)
    assert edit.path == "/rc-test:top/link[from='a'][to='b']"
    assert edit.value is not None
    assert "<speed>1</speed>" in edit.value


@pytest.mark.parametrize(
    "edit",
    [
        {"edit-id": "1", "operation": "frobnicate", "target": "/name"},
        {"edit-id": "1", "operation": "create", "target": "/name"},  # no value
        {
            "edit-id": "1",
            "operation": "insert",
            "target": "/hop=a",
            "where": "before",
            "value": {"rc-test:hop": [{"name": "a"}]},
        },  # no point
        {"edit-id": "1", "operation": "merge", "target": "name"},  # not absolute
        {"operation": "merge", "target": "/name"},
    ],
)
def test_yang_patch_refused(resolver: PathResolver, edit: dict[str, object]) -> None:
    body = json.dumps({"ietf-yang-patch:yang-patch": {"patch-id": "p", "edit": [edit]}})
    with pytest.raises(RestconfError) as caught:
        to_edits(parse_patch(body, Encoding.JSON), "rc-test:top", Encoding.JSON, resolver)
    assert caught.value.status == 400
