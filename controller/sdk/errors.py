"""The SDK's one exception type and the pure readers of the two protocols' error reports.

A NETCONF ``rpc-error`` (RFC 6241 4.3) and a RESTCONF ``errors`` body (RFC 8040 7.1) carry the
same fields; both become :class:`controller.errors.ErrorItem` values in an :class:`SdkError`.
A server out of reach is an :class:`SdkError` too, with ``error-type`` ``transport``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from controller.errors import CatsError, ErrorItem, ErrorType


class SdkError(CatsError):
    """A request the server refused, or could not be sent: the rpc-error fields in ``items``.

    ``status`` is the HTTP status of a RESTCONF reply (None over NETCONF or without a reply).
    """

    def __init__(self, *items: ErrorItem, status: int | None = None) -> None:
        super().__init__(*items)
        self.status = status

    @property
    def tag(self) -> str:
        """The error-tag of the first item (``invalid-value``, ``data-missing``, ...)."""
        return self.items[0].tag

    @property
    def app_tag(self) -> str | None:
        """The error-app-tag of the first item, if any."""
        return self.items[0].app_tag

    @property
    def path(self) -> str | None:
        """The error-path of the first item, if any."""
        return self.items[0].path


def _error_type(value: object) -> ErrorType:
    known = {member.value for member in ErrorType}
    return ErrorType(value) if value in known else ErrorType.APPLICATION


def _info(value: object) -> tuple[tuple[str, str], ...]:
    if isinstance(value, dict):
        return tuple((str(key), str(item)) for key, item in value.items())
    return ()


def restconf_items(status: int, body: bytes) -> tuple[ErrorItem, ...]:
    """The items of an ``ietf-restconf:errors`` reply, or one naming the HTTP status."""
    try:
        errors = json.loads(body)["ietf-restconf:errors"]["error"]
        found = tuple(
            ErrorItem(
                _error_type(error.get("error-type")),
                str(error.get("error-tag", "operation-failed")),
                str(error.get("error-message", "")),
                error.get("error-path"),
                error.get("error-app-tag"),
                _info(error.get("error-info")),
            )
            for error in errors
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        found = ()
    return found or (ErrorItem(ErrorType.PROTOCOL, "operation-failed", f"HTTP status {status}"),)


def netconf_items(errors: Iterable[Any]) -> tuple[ErrorItem, ...]:
    """The items of ncclient's ``RPCError`` objects (its ``errors``, or the error itself)."""
    found = []
    for error in errors:
        info = getattr(error, "info", None)
        found.append(
            ErrorItem(
                _error_type(getattr(error, "type", None)),
                str(getattr(error, "tag", None) or "operation-failed"),
                str(getattr(error, "message", None) or ""),
                getattr(error, "path", None),
                getattr(error, "app_tag", None),
                (("error-info", str(info)),) if info else (),
            )
        )
    return tuple(found) or (ErrorItem(ErrorType.RPC, "operation-failed", "rpc-error"),)


def unreachable(where: str, exc: BaseException) -> SdkError:
    """The error of a request that got no reply (refused, reset, timed out, no session)."""
    return SdkError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", f"{where}: {exc}"))


def not_of_schema(what: str, exc: BaseException) -> SdkError:
    """The error of a reply (or an object) the bindings cannot hold."""
    return SdkError(
        ErrorItem(ErrorType.APPLICATION, "malformed-message", f"{what} does not fit: {exc}")
    )
