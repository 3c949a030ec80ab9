"""An agent's NETCONF client of the C-PS: the same RPCs through the project's southbound peer
(RFC 6241 4.1, RFC 6242).

:class:`NetconfTransport` is :class:`controller.southbound.NetconfPeer` (a persistent ncclient
session with reconnect and backoff) with :class:`controller.southbound.RpcCodec`, which builds
each request from the RFC 7951 input and reads each reply through libyang, so what the agent
sends is schema-checked on the way out. An rpc-error or a message the schema refuses becomes
:class:`~agents.common.restconf.RefusedError`; no session,
:class:`~agents.common.restconf.UnreachableError`. The host key is not verified (a loopback or
lab C-PS); the password is the one of the RESTCONF settings.
"""

from __future__ import annotations

from agents.common.cps import CpsSettings
from agents.common.restconf import RefusedError, UnreachableError
from controller.errors import ErrorItem, ErrorType
from controller.model import Schema
from controller.southbound import (
    Credentials,
    NetconfPeer,
    PeerRefusedError,
    PeerSettings,
    PeerUnreachableError,
    ReplyInvalidError,
    RpcCodec,
)
from controller.types import Json


class NetconfTransport:
    """RPCs over one NETCONF session to ``host:port``."""

    def __init__(self, settings: CpsSettings, address: tuple[str, int]) -> None:
        self._schema = Schema()  # the CATS modules; kept open for the codec
        credentials = Credentials(settings.username or "", settings.password or "")
        self._peer = NetconfPeer(
            address,
            credentials,
            RpcCodec(self._schema.context),
            settings=PeerSettings(timeout=settings.timeout),
        )

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        """One RPC; raises :class:`RefusedError` or :class:`UnreachableError`."""
        try:
            return self._peer.call(f"{module}:{operation}", members)
        except (PeerRefusedError, ReplyInvalidError) as exc:  # the C-PS's answer, or our input
            raise RefusedError(0, *exc.items) from exc
        except PeerUnreachableError as exc:
            message = "; ".join(item.message for item in exc.items) or str(exc)
            item = ErrorItem(ErrorType.TRANSPORT, "operation-failed", f"NETCONF: {message}")
            raise UnreachableError(item) from exc

    def close(self) -> None:
        """Close the session and the schema."""
        self._peer.close()
        self._schema.close()
