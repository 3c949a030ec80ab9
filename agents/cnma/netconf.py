"""NETCONF client of the C-NMA: the same RPCs through ncclient (RFC 6241 4.1, RFC 6242).

:func:`rpc_element` builds the operation element from the RFC 7951 input with lxml and the
module's namespace (the C-NMA's inputs hold leaves, containers and lists, no identityref);
:func:`output_of` reads the top-level leaves of the reply. :class:`NetconfTransport` is the
ncclient session around them; it connects on first use and again after a failure, and turns
ncclient's errors into :class:`RefusedError` (an rpc-error) or :class:`UnreachableError`. The host
key is not verified (a loopback or lab C-PS); the password is the one of the RESTCONF settings.
"""

from __future__ import annotations

import contextlib
from typing import Any

import paramiko
from lxml import etree
from ncclient import manager
from ncclient.operations.errors import OperationError
from ncclient.operations.rpc import RPCError
from ncclient.transport.errors import TransportError

from agents.cnma.client import Json, RefusedError, UnreachableError
from agents.cnma.config import CpsSettings
from controller.errors import ErrorItem, ErrorType

NAMESPACE = "urn:ietf:params:xml:ns:yang:{module}"


def _append(parent: Any, namespace: str, name: str, value: Any) -> None:
    if isinstance(value, list):
        for item in value:
            _append(parent, namespace, name, item)
        return
    child = etree.SubElement(parent, f"{{{namespace}}}{name}")
    if isinstance(value, dict):
        for key, member in value.items():
            _append(child, namespace, key, member)
    elif isinstance(value, bool):
        child.text = "true" if value else "false"
    else:
        child.text = str(value)


def rpc_element(module: str, operation: str, members: Json) -> Any:
    """The ``<operation xmlns="...">`` element of an RPC with its input."""
    namespace = NAMESPACE.format(module=module)
    element = etree.Element(f"{{{namespace}}}{operation}", nsmap={None: namespace})
    for key, value in members.items():
        _append(element, namespace, key, value)
    return element


def output_of(reply: Any) -> Json:
    """The top-level leaves of an ``<rpc-reply>`` (``accepted-entries``, ...), as text."""
    root = etree.fromstring(reply.encode() if isinstance(reply, str) else reply)
    return {
        etree.QName(child).localname: child.text
        for child in root
        if len(child) == 0 and child.text and etree.QName(child).localname != "ok"
    }


def _item(error: Any) -> ErrorItem:
    kind = str(error.type or "application")
    return ErrorItem(
        ErrorType(kind) if kind in ErrorType.__members__.values() else ErrorType.APPLICATION,
        str(error.tag or "operation-failed"),
        str(error.message or ""),
        error.path,
        error.app_tag,
    )


class NetconfTransport:
    """RPCs over one NETCONF session to ``host:port``."""

    def __init__(self, settings: CpsSettings, address: tuple[str, int]) -> None:
        self._settings = settings
        self._address = address
        self._session: Any = None

    def _connect(self) -> Any:
        if self._session is None or not self._session.connected:
            host, port = self._address
            self._session = manager.connect(
                host=host,
                port=port,
                username=self._settings.username,
                password=self._settings.password,
                hostkey_verify=False,
                allow_agent=False,
                look_for_keys=False,
                timeout=self._settings.timeout,
            )
        return self._session

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        """One RPC; raises :class:`RefusedError` or :class:`UnreachableError`."""
        try:
            reply = self._connect().dispatch(rpc_element(module, operation, members))
        except RPCError as exc:
            errors = getattr(exc, "errors", None) or [exc]
            raise RefusedError(0, *(_item(error) for error in errors)) from exc
        except (TransportError, OperationError, paramiko.SSHException, OSError, EOFError) as exc:
            self.close()
            item = ErrorItem(ErrorType.TRANSPORT, "operation-failed", f"NETCONF: {exc}")
            raise UnreachableError(item) from exc
        return output_of(reply.xml)

    def close(self) -> None:
        """Close the session (if any)."""
        session, self._session = self._session, None
        if session is not None and session.connected:
            with contextlib.suppress(RPCError, TransportError, OperationError, OSError, EOFError):
                session.close_session()
