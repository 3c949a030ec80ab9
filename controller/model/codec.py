"""Notifications from RFC 7951 JSON to XML, through libyang (RFC 7950 7.16.2, RFC 8040 6.4).

The core keeps every notification as RFC 7951 JSON; a northbound that sends XML (a RESTCONF
stream in the XML encoding, NETCONF) asks for the same notification in XML. The document is
parsed as a notification of the schema and printed by libyang, so the namespaces, the
identityref and instance-identifier values and, for a notification nested in data
(RFC 7950 7.16), its ancestors come out as the schema says.
"""

from __future__ import annotations

import libyang

from controller.model import nodes
from controller.model.schema import Encoding

_NOTIF = nodes.lib.LYD_TYPE_NOTIF_YANG


class NotificationCodec:
    """Converts notification documents of one compiled schema; thread-safe (no shared tree)."""

    def __init__(self, context: libyang.Context) -> None:
        self._ctx = context.cdata

    def to_xml(self, document: str) -> str:
        """The XML of a notification given in RFC 7951 JSON (``{"mod:event": {...}}``).

        Raises:
            ModelError: when the document is not a notification of the schema.
        """
        tree, _ = nodes.parse_op(self._ctx, document, Encoding.JSON, _NOTIF)
        try:
            flags = nodes.lib.LYD_PRINT_WITHSIBLINGS | nodes.lib.LYD_PRINT_SHRINK
            return nodes.print_tree(tree, Encoding.XML, flags)
        finally:
            nodes.free_all(tree)
