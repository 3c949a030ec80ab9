"""The SDK's readers of RESTCONF and NETCONF error reports (RFC 8040 7.1, RFC 6241 4.3)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from controller.errors import CatsError, ErrorItem, ErrorType
from controller.sdk.errors import SdkError, netconf_items, restconf_items


def test_restconf_errors_keep_every_field() -> None:
    body = json.dumps(
        {
            "ietf-restconf:errors": {
                "error": [
                    {
                        "error-type": "application",
                        "error-tag": "operation-failed",
                        "error-app-tag": "normalization-bounds",
                        "error-path": "/m:a/b",
                        "error-message": "max below min",
                        "error-info": {"bad-element": "max"},
                    },
                    {
                        "error-type": "protocol",
                        "error-tag": "lock-denied",
                        "error-message": "locked",
                    },
                ]
            }
        }
    ).encode()
    first, second = restconf_items(412, body)
    assert first == ErrorItem(
        ErrorType.APPLICATION,
        "operation-failed",
        "max below min",
        "/m:a/b",
        "normalization-bounds",
        (("bad-element", "max"),),
    )
    assert (second.type, second.tag, second.path, second.app_tag) == (
        ErrorType.PROTOCOL,
        "lock-denied",
        None,
        None,
    )


def test_a_reply_without_errors_names_the_status() -> None:
    (item,) = restconf_items(502, b"<html>bad gateway</html>")
    assert (item.tag, item.message) == ("operation-failed", "HTTP status 502")


@dataclass
class RpcErrorLike:
    """The attributes of ncclient's RPCError."""

    type: str | None
    tag: str | None
    message: str | None
    path: str | None
    app_tag: str | None
    info: str | None


def test_netconf_errors_keep_every_field_and_an_unknown_type_is_application() -> None:
    errors = [
        RpcErrorLike("rpc", "missing-element", "no cs-id", "/m:op", None, None),
        RpcErrorLike("weird", None, None, None, "x", "<info/>"),
    ]
    first, second = netconf_items(errors)
    assert first == ErrorItem(ErrorType.RPC, "missing-element", "no cs-id", "/m:op")
    assert (second.type, second.tag, second.app_tag, second.info) == (
        ErrorType.APPLICATION,
        "operation-failed",
        "x",
        (("error-info", "<info/>"),),
    )


def test_sdk_error_is_a_cats_error_with_the_first_item_at_hand() -> None:
    item = ErrorItem(ErrorType.APPLICATION, "data-missing", "dangling", "/m:a", "instance-required")
    error = SdkError(item, status=409)
    assert isinstance(error, CatsError)
    assert (error.tag, error.app_tag, error.path, error.status) == (
        "data-missing",
        "instance-required",
        "/m:a",
        409,
    )
