"""RESTCONF replies of the C-PS as error items and output (RFC 8040 7.1)."""

from __future__ import annotations

import json

from agents.common.restconf import errors_of, output_of
from controller.errors import ErrorType

SM = "ietf-cats-service-metrics"


def test_restconf_errors_become_items() -> None:
    body = {
        "ietf-restconf:errors": {
            "error": [
                {
                    "error-type": "application",
                    "error-tag": "invalid-value",
                    "error-app-tag": "sequence-not-increasing",
                    "error-path": f"/{SM}:report-network-metrics/sequence-number",
                    "error-message": "sequence-number 3 of cnma does not exceed 9",
                    "error-info": {"bad-value": "3"},
                }
            ]
        }
    }
    (item,) = errors_of(400, json.dumps(body).encode())
    assert (item.type, item.tag, item.app_tag) == (
        ErrorType.APPLICATION,
        "invalid-value",
        "sequence-not-increasing",
    )
    assert item.path is not None
    assert item.path.endswith("/sequence-number")
    assert item.info == (("bad-value", "3"),)


def test_a_reply_that_is_not_restconf_errors_still_gives_an_item() -> None:
    for body in (b"<html>bad gateway</html>", b"{}", b'{"ietf-restconf:errors": 1}'):
        (item,) = errors_of(502, body)
        assert (item.type, item.message) == (ErrorType.TRANSPORT, "HTTP status 502")


def test_output_members() -> None:
    body = b'{"ietf-cats-service-metrics:output": {"accepted-entries": 2}}'
    assert output_of("ietf-cats-service-metrics", body) == {"accepted-entries": 2}
    assert output_of("ietf-cats-service-metrics", b"") == {}
