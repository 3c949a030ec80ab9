"""The errors of the southbound layer: one subclass of CatsError per way a call fails.

No ncclient, paramiko or libyang exception leaves this package (docs/architecture.md): a
peer that cannot be reached is :class:`PeerUnreachableError`, an rpc-error of the peer is
:class:`PeerRefusedError` with the peer's own error items, and a reply the schema does not
accept is :class:`ReplyInvalidError`.
"""

from __future__ import annotations

from controller.errors import CatsError, ErrorItem, ErrorType


class SouthboundError(CatsError):
    """A call from the C-PS to an agent or forwarder failed."""


class PeerUnreachableError(SouthboundError):
    """The peer could not be reached (connect, transport, timeout, or backing off)."""


class PeerRefusedError(SouthboundError):
    """The peer answered with an rpc-error; ``items`` are the peer's (RFC 6241 4.3)."""


class ReplyInvalidError(SouthboundError):
    """The peer's reply (or the request built for it) is not valid against the schema."""


def unreachable(peer: str, message: str) -> PeerUnreachableError:
    """A :class:`PeerUnreachableError` naming the peer."""
    return PeerUnreachableError(
        ErrorItem(ErrorType.TRANSPORT, "operation-failed", f"NETCONF peer {peer}: {message}")
    )


def invalid(peer: str, items: tuple[ErrorItem, ...], what: str) -> ReplyInvalidError:
    """A :class:`ReplyInvalidError` carrying libyang's items, each prefixed with the peer."""
    if not items:
        items = (ErrorItem(ErrorType.APPLICATION, "operation-failed", "invalid"),)
    return ReplyInvalidError(
        *(
            ErrorItem(
                ErrorType.APPLICATION,
                "operation-failed",
                f"{what} of NETCONF peer {peer}: {item.message}",
                item.path,
                item.app_tag,
            )
            for item in items
        )
    )
