"""A small transport abstraction for the service-metrics functional tests: one RPC interface
over RESTCONF (JSON) and over NETCONF (ncclient, XML), with answers in one plain shape.

Leaf values are strings, identities ``module:name``, lists lists, empty leaves ``""``; so the
assertions of a test hold for either northbound.
"""

from __future__ import annotations

from typing import Any, Protocol

from lxml import etree
from ncclient.operations.rpc import RPCError

from controller.types import Json
from tests.functional.restconf_server import JSON, Server

SM = "ietf-cats-service-metrics"
YANG_NS = "urn:ietf:params:xml:ns:yang:"
SM_NS = f"{YANG_NS}{SM}"
NC_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
LISTS = frozenset({"candidate", "relaxation", "decision", "unusable-value", "refused-entry"})
LEAF_LISTS = frozenset({"violated-soft-constraint", "objective", "tie-break"})


class RpcFailedError(Exception):
    """An RPC answered with an error: the fields of its (first) error."""

    def __init__(self, tag: str, app_tag: str, message: str) -> None:
        super().__init__(f"{tag} ({app_tag}): {message}")
        self.tag, self.app_tag, self.message = tag, app_tag, message


class Northbound(Protocol):
    """One protocol to the server, with answers in one plain shape."""

    name: str

    def call(self, operation: str, members: Json) -> Json:
        """Invoke an RPC of ietf-cats-service-metrics; its output (raises RpcFailedError)."""
        ...

    def decision(self, decision_id: str) -> Json:
        """One entry of /ietf-cats-service-metrics:selection-decisions/decision."""
        ...

    def set_network_only(self, *, enabled: bool) -> None:
        """Set selection-policy/fallback/network-only in running."""
        ...


def plain(value: Any) -> Any:
    """RFC 7951 JSON in the test shape: scalars as strings, ``[null]`` (empty) as ``""``."""
    if isinstance(value, dict):
        return {name.split(":", 1)[-1]: plain(member) for name, member in value.items()}
    if value == [None]:
        return ""
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Restconf:
    """RESTCONF with JSON bodies."""

    name = "restconf"

    def __init__(self, server: Server) -> None:
        self.server = server

    def call(self, operation: str, members: Json) -> Json:
        """POST to /restconf/operations; 200 gives the output, an error raises RpcFailedError."""
        reply = self.server.request(
            "POST",
            f"operations/{SM}:{operation}",
            json={f"{SM}:input": members},
            headers={"Content-Type": JSON, "Accept": JSON},
        )
        if reply.status_code != 200:
            error = reply.json()["ietf-restconf:errors"]["error"][0]
            tag, app_tag = error["error-tag"], error.get("error-app-tag", "")
            raise RpcFailedError(tag, app_tag, error.get("error-message", ""))
        found: Json = plain(reply.json()[f"{SM}:output"])
        return found

    def decision(self, decision_id: str) -> Json:
        """GET the decision resource by its key."""
        path = f"data/{SM}:selection-decisions/decision={decision_id}"
        (found,) = self.server.get_json(path)[f"{SM}:decision"]
        record: Json = plain(found)
        return record

    def set_network_only(self, *, enabled: bool) -> None:
        """PATCH the fallback container."""
        reply = self.server.request(
            "PATCH",
            f"data/{SM}:selection-policy/fallback",
            json={f"{SM}:fallback": {"network-only": enabled}},
            headers={"Content-Type": JSON},
        )
        assert reply.status_code == 204, reply.text


def element_to_plain(element: Any) -> Any:
    """An XML element in the test shape: identities as ``module:name``, known lists as lists.

    An identity value whose prefix is not declared stays as written, and fails comparisons.
    """
    children = list(element)
    if not children:
        text = (element.text or "").strip()
        prefix, colon, name = text.partition(":")
        namespace = element.nsmap.get(prefix) if colon else None
        if namespace is not None and namespace.startswith(YANG_NS):
            return f"{namespace.removeprefix(YANG_NS)}:{name}"
        return text
    found: Json = {}
    for child in children:
        name = etree.QName(child).localname
        if name in LISTS or name in LEAF_LISTS:
            found.setdefault(name, []).append(element_to_plain(child))
        else:
            found[name] = element_to_plain(child)
    return found


def rpc_element(operation: str, members: Json) -> Any:
    """An RPC element of ietf-cats-service-metrics (identities with the ``sm`` prefix)."""
    root = etree.Element(f"{{{SM_NS}}}{operation}", nsmap={None: SM_NS, "sm": SM_NS})
    _fill(root, members)
    return root


def _fill(parent: Any, members: Json) -> None:
    for name, value in members.items():
        for item in value if isinstance(value, list) else [value]:
            child = etree.SubElement(parent, f"{{{SM_NS}}}{name}")
            if isinstance(item, dict):
                _fill(child, item)
            else:
                text = str(item).lower() if isinstance(item, bool) else str(item)
                child.text = text.replace(f"{SM}:", "sm:")


class Netconf:
    """NETCONF through ncclient: ``dispatch``, ``get`` with a subtree filter, ``edit-config``."""

    name = "netconf"

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    def call(self, operation: str, members: Json) -> Json:
        """``dispatch`` the RPC; the rpc-reply's children, or RpcFailedError for an rpc-error."""
        try:
            reply = self.manager.dispatch(rpc_element(operation, members))
        except RPCError as exc:
            raise RpcFailedError(exc.tag or "", exc.app_tag or "", exc.message or "") from exc
        root = etree.fromstring(reply.xml.encode())
        output = [child for child in root if etree.QName(child).namespace == SM_NS]
        holder = etree.Element("output")
        holder.extend(output)
        found: Json = element_to_plain(holder) if output else {}
        return found

    def get_decision(self, decision_id: str) -> Any:
        """The ``decision`` element of a ``get`` with a subtree filter on its key."""
        subtree = (
            f'<selection-decisions xmlns="{SM_NS}"><decision><id>{decision_id}</id></decision>'
            "</selection-decisions>"
        )
        reply = etree.fromstring(self.manager.get(filter=("subtree", subtree)).xml.encode())
        (found,) = reply.iter(f"{{{SM_NS}}}decision")
        return found

    def decision(self, decision_id: str) -> Json:
        """The decision from a ``get``."""
        record: Json = element_to_plain(self.get_decision(decision_id))
        return record

    def set_network_only(self, *, enabled: bool) -> None:
        """``edit-config`` (merge) of running."""
        config = (
            f'<config xmlns="{NC_NS}"><selection-policy xmlns="{SM_NS}"><fallback>'
            f"<network-only>{str(enabled).lower()}</network-only></fallback></selection-policy>"
            "</config>"
        )
        assert self.manager.edit_config(target="running", config=config).ok
