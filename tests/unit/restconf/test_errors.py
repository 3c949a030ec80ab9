"""The error-tag to status mapping (RFC 8040 7) and the errors document."""

from __future__ import annotations

import json

import pytest
from lxml import etree

from controller.errors import CatsError, ErrorItem, ErrorType
from controller.model import Encoding
from controller.restconf.errors import (
    RESTCONF_NS,
    protocol_error,
    render_errors,
    status_for,
    status_of,
)


def _item(tag: str, app_tag: str | None = None) -> ErrorItem:
    return ErrorItem(ErrorType.APPLICATION, tag, "m", app_tag=app_tag)


@pytest.mark.parametrize(
    ("tag", "status"),
    [
        ("in-use", 409),
        ("invalid-value", 400),
        ("too-big", 413),
        ("missing-attribute", 400),
        ("bad-attribute", 400),
        ("unknown-attribute", 400),
        ("bad-element", 400),
        ("unknown-element", 400),
        ("unknown-namespace", 400),
        ("access-denied", 403),
        ("lock-denied", 409),
        ("resource-denied", 409),
        ("rollback-failed", 500),
        ("data-exists", 409),
        ("data-missing", 409),
        ("operation-not-supported", 405),
        ("operation-failed", 500),
        ("partial-operation", 500),
        ("malformed-message", 400),
    ],
)
def test_rfc8040_table(tag: str, status: int) -> None:
    assert status_of([_item(tag)]) == status


def test_constraint_failures_are_failed_preconditions_not_server_errors() -> None:
    assert status_of([_item("operation-failed", "data-not-unique")]) == 412
    assert status_of([_item("operation-failed", "must-violation")]) == 412
    assert status_for(CatsError(_item("data-exists"))) == 409
    assert status_for(protocol_error(404, "invalid-value", "gone")) == 404


def test_json_document() -> None:
    item = ErrorItem(ErrorType.PROTOCOL, "invalid-value", "bad", path="/m:a/b")
    document = json.loads(render_errors([item], Encoding.JSON))
    (error,) = document["ietf-restconf:errors"]["error"]
    assert error == {
        "error-type": "protocol",
        "error-tag": "invalid-value",
        "error-path": "/m:a/b",
        "error-message": "bad",
    }


def test_xml_document_declares_path_prefixes() -> None:
    item = ErrorItem(ErrorType.APPLICATION, "data-exists", "there", path="/m:a/b[k='1']")
    body = render_errors([item], Encoding.XML, {"m": "urn:m"}.get)
    root = etree.fromstring(body)
    assert root.tag == f"{{{RESTCONF_NS}}}errors"
    path = root.find(f".//{{{RESTCONF_NS}}}error-path")
    assert path is not None
    assert path.nsmap["m"] == "urn:m"
    assert path.text == "/m:a/b[k='1']"
