"""The gateway's client of the C-PS over NETCONF (RFC 6241, RFC 6242): the RPCs through
:class:`agents.common.netconf.NetconfTransport` (the southbound's NetconfPeer and RpcCodec,
which checks each input against the schema on the way out) and the session read with ``<get>``
and a subtree filter (RFC 6241 7.7, 6), whose ``<data>`` libyang turns into RFC 7951 JSON, the
form the RESTCONF client reads."""

from __future__ import annotations

import json
from typing import Any

from lxml import etree

from agents.common.netconf import NetconfTransport
from agents.gateway.client import AS, RefusedError, UnreachableError
from controller.model import Encoding, ModelError, nodes
from controller.southbound import PeerRefusedError, PeerUnreachableError
from controller.types import Json

NAMESPACE = f"urn:ietf:params:xml:ns:yang:{AS}"


def session_filter(session_id: str) -> Any:
    """The subtree filter that selects one session."""
    top = etree.Element(f"{{{NAMESPACE}}}agent-selection", nsmap={None: NAMESPACE})
    session = etree.SubElement(
        etree.SubElement(top, f"{{{NAMESPACE}}}sessions"), f"{{{NAMESPACE}}}session"
    )
    etree.SubElement(session, f"{{{NAMESPACE}}}session-id").text = session_id
    return top


def session_of(ctx: Any, data: Any) -> Json | None:
    """The session in a ``<data>`` element, as RFC 7951 members (None when it holds none).

    Raises:
        ModelError: the reply is not data of the schema.
    """
    children = [etree.tostring(c, encoding="unicode") for c in data if isinstance(c.tag, str)]
    if not children:
        return None
    tree = nodes.parse_data(ctx, "".join(children), Encoding.XML, state=True)
    try:
        printed = nodes.print_tree(tree, Encoding.JSON, nodes.lib.LYD_PRINT_WITHSIBLINGS)
    finally:
        nodes.free_all(tree)
    loaded: Json = json.loads(printed or "{}")
    found = loaded.get(f"{AS}:agent-selection", {}).get("sessions", {}).get("session", [])
    return dict(found[0]) if found else None


class NetconfCps(NetconfTransport):
    """RPCs and the session read over one NETCONF session."""

    def session(self, session_id: str) -> Json | None:
        """``<get>`` the session; raises :class:`RefusedError` or :class:`UnreachableError`."""
        subtree = session_filter(session_id)

        def operation(manager: Any) -> Any:
            return manager.get(filter=("subtree", subtree)).data_ele

        try:
            data = self._peer.run("get", operation)
            return session_of(self._schema.context.cdata, data)
        except (PeerRefusedError, ModelError) as exc:
            raise RefusedError(0, *exc.items) from exc
        except PeerUnreachableError as exc:
            raise UnreachableError(*exc.items) from exc
