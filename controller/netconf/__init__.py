"""RFC 6241/6242 northbound: SSH server, framing, sessions and operations over the server core."""

from controller.netconf.server import NetconfServer, NetconfSettings

__all__ = ["NetconfServer", "NetconfSettings"]
