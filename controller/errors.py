"""The one root exception of the project and the structured error item it carries.

A NETCONF ``rpc-error`` (RFC 6241 4.3) and a RESTCONF ``error`` (RFC 8040 7.1) have the same
fields; every layer raises a subclass of :class:`CatsError` holding a tuple of
:class:`ErrorItem`, and each northbound renders the items in its own encoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ErrorType(StrEnum):
    """The layer an error belongs to (RFC 6241 4.3 ``error-type``)."""

    TRANSPORT = "transport"
    RPC = "rpc"
    PROTOCOL = "protocol"
    APPLICATION = "application"


@dataclass(frozen=True, slots=True)
class ErrorItem:
    """One error: the fields shared by rpc-error and ietf-restconf:errors."""

    type: ErrorType
    tag: str
    message: str
    path: str | None = None
    app_tag: str | None = None
    info: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"{self.tag}{where}: {self.message}"


class CatsError(Exception):
    """Root of every error the project raises on purpose."""

    def __init__(self, *items: ErrorItem) -> None:
        if not items:
            raise ValueError("an error carries at least one ErrorItem")
        super().__init__("; ".join(str(item) for item in items))
        self.items: tuple[ErrorItem, ...] = items


def listen_error(service: str, address: str, port: int, exc: OSError, option: str) -> CatsError:
    """A server that cannot bind its port (taken, not allowed), in one line saying what to do:
    ``option`` is the command-line option that moves it."""
    cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
    reason = cause.strerror or str(cause)
    return CatsError(
        ErrorItem(
            ErrorType.TRANSPORT,
            "resource-denied",
            f"{service} cannot listen on {address}:{port}: {reason}; stop what listens there "
            f"or choose another {option}",
        )
    )
