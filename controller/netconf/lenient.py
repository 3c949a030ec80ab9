"""The lenient reading of NETCONF messages: unqualified base elements (RFC 6241 3.1).

RFC 6241 puts every element of the protocol in ``urn:ietf:params:xml:ns:netconf:base:1.0``.
Junos and netconfd also take ``<rpc><commit/></rpc>`` or ``<lock><target><running/>``
without that namespace, and scripts written for them (Ansible's ``netconf_rpc`` examples,
ncclient device-handler scripts) rely on it. So, unless the server is strict
(``catsctl serve --netconf-strict``), the envelope, a base operation and its parameters that
carry no namespace at all are read as base elements. Content is never touched: the data of a
``<config>`` and of a subtree ``<filter>`` (where an element without a namespace matches every
module, RFC 6241 6.2.1) stay as they were written.
"""

from __future__ import annotations

from lxml import etree

from controller.netconf.messages import NC
from controller.types import Element

#: RFC 6241 7 and 8: the base operations.
BASE_OPERATIONS = frozenset(
    {
        "get",
        "get-config",
        "edit-config",
        "copy-config",
        "delete-config",
        "lock",
        "unlock",
        "close-session",
        "kill-session",
        "validate",
        "commit",
        "discard-changes",
        "cancel-commit",
    }
)
#: Their parameters, and what a ``<source>`` or ``<target>`` holds.
_PARAMETERS = frozenset(
    {
        "source",
        "target",
        "config",
        "filter",
        "default-operation",
        "test-option",
        "error-option",
        "session-id",
        "confirmed",
        "confirm-timeout",
        "persist",
        "persist-id",
        "url",
    }
)
_DATASTORES = frozenset({"running", "candidate", "startup", "url", "config"})
#: The hello and what it holds (RFC 6241 8.1).
_HELLO = frozenset({"hello", "capabilities", "capability", "session-id"})


def _unqualified(element: Element, names: frozenset[str]) -> bool:
    return (
        isinstance(element.tag, str)
        and etree.QName(element).namespace is None
        and (element.tag in names)
    )


def _qualify(element: Element) -> None:
    element.tag = NC + element.tag


def qualify_rpc(root: Element) -> Element:
    """Put the unqualified envelope, base operation and parameters of an ``<rpc>`` in the
    base namespace (in place; the root is returned)."""
    if _unqualified(root, frozenset({"rpc"})):
        _qualify(root)
    if root.tag != NC + "rpc":
        return root
    for operation in root:
        if not _unqualified(operation, BASE_OPERATIONS):
            continue
        _qualify(operation)
        for parameter in operation:
            if not _unqualified(parameter, _PARAMETERS):
                continue
            _qualify(parameter)
            if etree.QName(parameter).localname in ("source", "target"):
                for datastore in parameter:
                    if _unqualified(datastore, _DATASTORES):
                        _qualify(datastore)
    return root


def qualify_hello(root: Element) -> Element:
    """The same for a client's ``<hello>`` (in place; the root is returned)."""
    for element in root.iter():
        if _unqualified(element, _HELLO):
            _qualify(element)
    return root
