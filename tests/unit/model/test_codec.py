"""controller.model.codec: notifications from RFC 7951 JSON to XML through libyang."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from controller.model import ModelError, Schema
from controller.model.codec import NotificationCodec

TEST_YANG = Path(__file__).resolve().parents[2] / "yang"
RC = "urn:example:rc-test"
NOTIFICATIONS = "urn:ietf:params:xml:ns:yang:ietf-netconf-notifications"


@pytest.fixture(scope="module")
def codec() -> Iterator[NotificationCodec]:
    """A codec over the server's schema with the test modules."""
    with Schema.for_server([TEST_YANG]) as compiled:
        yield NotificationCodec(compiled.context)


def test_a_notification_prints_in_its_namespace(codec: NotificationCodec) -> None:
    root = etree.fromstring(codec.to_xml('{"rc-test:ticked": {"count": 3}}'))
    assert root.tag == f"{{{RC}}}ticked"
    assert root.findtext(f"{{{RC}}}count") == "3"


def test_instance_identifiers_get_xml_prefixes(codec: NotificationCodec) -> None:
    change = {
        "ietf-netconf-notifications:netconf-config-change": {
            "changed-by": {"username": "alice", "session-id": 0},
            "datastore": "running",
            "edit": [{"target": "/rc-test:top/name", "operation": "merge"}],
        }
    }
    root = etree.fromstring(codec.to_xml(json.dumps(change)))
    assert root.tag == f"{{{NOTIFICATIONS}}}netconf-config-change"
    target = root.find(f"{{{NOTIFICATIONS}}}edit/{{{NOTIFICATIONS}}}target")
    assert target is not None
    prefix = next(p for p, ns in target.nsmap.items() if ns == RC)
    assert target.text == f"/{prefix}:top/{prefix}:name"


def test_what_is_not_a_notification_is_refused(codec: NotificationCodec) -> None:
    with pytest.raises(ModelError):
        codec.to_xml('{"rc-test:top": {"name": "x"}}')
    with pytest.raises(ModelError):
        codec.to_xml('{"rc-test:ticked": {"count": "many"}}')
