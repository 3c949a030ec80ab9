"""The NETCONF client side of the C-PS: typed calls to C-SMAs (and, later, forwarders)."""

from controller.southbound.codec import RpcCodec
from controller.southbound.csma import (
    NetconfStateAgents,
    Result,
    Results,
    StateAgents,
    Target,
    fan_out,
)
from controller.southbound.errors import (
    PeerRefusedError,
    PeerUnreachableError,
    ReplyInvalidError,
    SouthboundError,
)
from controller.southbound.peer import Credentials, NetconfPeer, PeerSettings

__all__ = [
    "Credentials",
    "NetconfPeer",
    "NetconfStateAgents",
    "PeerRefusedError",
    "PeerSettings",
    "PeerUnreachableError",
    "ReplyInvalidError",
    "Result",
    "Results",
    "RpcCodec",
    "SouthboundError",
    "StateAgents",
    "Target",
    "fan_out",
]
