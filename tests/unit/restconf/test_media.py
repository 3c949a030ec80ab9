"""Accept and Content-Type negotiation (RFC 8040 5.2): 406 and 415."""

from __future__ import annotations

import pytest

from controller.model import Encoding
from controller.restconf.errors import RestconfError
from controller.restconf.media import body_type, negotiate


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, Encoding.JSON),
        ("application/yang-data+xml", Encoding.XML),
        ("application/yang-data+json", Encoding.JSON),
        ("text/html, application/yang-data+xml;q=0.9", Encoding.XML),
        ("application/yang-data+json;q=0.1, application/yang-data+xml", Encoding.XML),
        ("*/*", Encoding.JSON),
        ("application/xml", Encoding.XML),
    ],
)
def test_negotiate(accept: str | None, expected: Encoding) -> None:
    assert negotiate(accept) is expected


def test_wildcard_keeps_the_body_encoding() -> None:
    assert negotiate("*/*", Encoding.XML) is Encoding.XML


def test_nothing_acceptable_is_406() -> None:
    with pytest.raises(RestconfError) as caught:
        negotiate("text/html, application/yang-data+json;q=0")
    assert caught.value.status == 406


def test_body_types() -> None:
    assert body_type("application/yang-data+xml; charset=utf-8").encoding is Encoding.XML
    assert body_type("application/yang-patch+json", allow_patch=True).yang_patch
    for bad, patch in (
        ("text/plain", False),
        (None, False),
        ("application/yang-patch+json", False),
    ):
        with pytest.raises(RestconfError) as caught:
            body_type(bad, allow_patch=patch)
        assert caught.value.status == 415
