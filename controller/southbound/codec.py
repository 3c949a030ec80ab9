"""RPC documents of the southbound calls: RFC 7951 members in, NETCONF XML out, and back.

:class:`RpcCodec` validates the input of an RPC against the schema (libyang ``lyd_parse_op``
of the YANG-form document, RFC 7950 7.14) and prints it as the XML operation element of an
``<rpc>`` (RFC 6241 4.1); a reply's children are parsed as the RPC's output
(``LYD_TYPE_REPLY_YANG``) and returned as RFC 7951 members. Identityref values keep their
module prefixes (libyang declares them). Pure apart from libyang; no socket.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from lxml import etree

from controller.model import nodes
from controller.model.schema import Encoding
from controller.types import Json

NAMESPACE = "urn:ietf:params:xml:ns:yang:{module}"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)
_RPC = nodes.lib.LYD_TYPE_RPC_YANG
_REPLY = nodes.lib.LYD_TYPE_REPLY_YANG
_NOTIF = nodes.lib.LYD_TYPE_NOTIF_YANG
_NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
_NOTIFICATION = "urn:ietf:params:xml:ns:netconf:notification:1.0"
_NETMOD = "urn:ietf:params:xml:ns:netmod:notification"
_PREFIX_DECLARATION = re.compile(r'\sxmlns:([A-Za-z_][\w.-]*)="([^"]*)"')


def _hoisted(root: Any, printed: str) -> Any:
    """The operation element declaring, on itself, every prefix an identityref value uses.

    libyang declares a prefix on the leaf that uses it; lxml (and ncclient, which re-parents
    the element into its ``<rpc>``) drops such a declaration when the default namespace has
    the same URI, though the value still needs it (the issue controller.datastore.rpc has).
    """
    declared = dict(_PREFIX_DECLARATION.findall(printed))
    if not declared:
        return root
    hoisted = etree.Element(root.tag, nsmap={**root.nsmap, **declared})
    hoisted.text = root.text
    hoisted.extend(list(root))
    return hoisted


class RpcCodec:
    """Builds and reads the RPCs of one schema (a libyang context the caller keeps open)."""

    def __init__(self, context: Any) -> None:
        self._ctx = context.cdata if hasattr(context, "cdata") else context
        self._guard = threading.Lock()  # one parse at a time on the shared context

    def request(self, name: str, members: Json) -> Any:
        """The ``<rpc>`` child element of ``module:operation`` with ``members`` as its input.

        Raises:
            ModelError: libyang's items of libyang when ``members`` is not a valid input.
        """
        text = json.dumps({name: members})
        with self._guard:
            tree, op = nodes.parse_op(self._ctx, text, Encoding.JSON, _RPC)
            try:
                printed = nodes.print_tree(op, Encoding.XML)
            finally:
                nodes.free_all(tree)
        return _hoisted(etree.fromstring(printed.encode(), _PARSER), printed)

    def reply(self, name: str, reply: bytes | str) -> Json:
        """The output members of an ``<rpc-reply>`` to ``module:operation`` (``{}`` for ``<ok/>``).

        Raises:
            ModelError: libyang's items of libyang when the reply is not the RPC's output.
        """
        data = reply.encode() if isinstance(reply, str) else reply
        root = etree.fromstring(data, _PARSER)
        module, operation = name.split(":", 1)
        namespace = NAMESPACE.format(module=module)
        children = [
            etree.tostring(child, encoding="unicode")  # keeps the prefixes in scope
            for child in root
            if isinstance(child.tag, str) and etree.QName(child).namespace != _NC
        ]  # <ok/>, or <rpc-error> that ncclient has already raised, are not output
        if not children:
            return {}
        wrapper = etree.Element(f"{{{namespace}}}{operation}", nsmap={None: namespace})
        head = etree.tostring(wrapper, encoding="unicode").removesuffix("/>")
        text = f"{head}>{''.join(children)}</{operation}>"
        with self._guard:
            tree, op = nodes.parse_op(self._ctx, text, Encoding.XML, _REPLY)
            try:
                printed = nodes.print_tree(op, Encoding.JSON)
            finally:
                nodes.free_all(tree)
        loaded: Any = json.loads(printed or "{}")
        inner: Any = next(iter(loaded.values()), {}) if isinstance(loaded, dict) else {}
        return dict(inner) if isinstance(inner, dict) else {}

    def notification(self, message: bytes | str) -> tuple[str, Json] | None:
        """The event of a ``<notification>`` (RFC 5277 4) as (``module:name``, members); the
        stream's own events (``replayComplete``, ``notificationComplete``) as
        (``netmod:NAME``, {}); None for a notification without an event.

        Raises:
            ModelError: libyang's items when the event is not valid against the schema.
        """
        data = message.encode() if isinstance(message, str) else message
        root = etree.fromstring(data, _PARSER)
        events = [
            child
            for child in root
            if isinstance(child.tag, str) and etree.QName(child).namespace != _NOTIFICATION
        ]
        if not events:
            return None
        if etree.QName(events[0]).namespace == _NETMOD:
            return f"netmod:{etree.QName(events[0]).localname}", {}
        text = etree.tostring(events[0], encoding="unicode")
        with self._guard:
            tree, op = nodes.parse_op(self._ctx, text, Encoding.XML, _NOTIF)
            try:
                printed = nodes.print_tree(op, Encoding.JSON)
            finally:
                nodes.free_all(tree)
        loaded: Any = json.loads(printed or "{}")
        if not isinstance(loaded, dict) or not loaded:
            return None
        name, members = next(iter(loaded.items()))
        return str(name), dict(members) if isinstance(members, dict) else {}
