"""The SDK over NETCONF (RFC 6241, RFC 6242 SSH): XML on one ncclient session.

Objects travel as pyangbind's IETF XML (:func:`controller.sdk.objects.to_xml`): reads are
``<get>`` (configuration and state) or ``<get-config>`` with a subtree filter naming the
container (RFC 6241 6), edits ``<edit-config>`` of running or the candidate (``replace`` as an
``operation`` attribute, 7.2), then ``<commit>``, optionally confirmed (8.4), operations their
own element in an ``<rpc>`` (4.1). The bulk path (:meth:`invoke_members`) turns RFC 7951
members into XML with libyang (:mod:`controller.model`), since building pyangbind objects is
what it avoids. An ``rpc-error`` raises :class:`~controller.sdk.errors.SdkError` with its fields;
no ncclient or paramiko exception escapes.
"""

from __future__ import annotations

import json
from typing import Any

import paramiko
from lxml import etree
from ncclient import manager
from ncclient.operations.errors import OperationError, TimeoutExpiredError
from ncclient.operations.rpc import RPCError
from ncclient.transport.errors import TransportError

from controller.sdk import objects, paths
from controller.sdk.errors import SdkError, netconf_items, not_of_schema, unreachable
from controller.sdk.objects import Binding
from controller.types import Element, Json

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)
_TRANSPORT = (TransportError, OperationError, TimeoutExpiredError, paramiko.SSHException, OSError)


def _refused(exc: RPCError) -> SdkError:
    return SdkError(*netconf_items(getattr(exc, "errors", None) or [exc]))


def operation_element(module: str, operation: str, members_xml: Element | None) -> Element:
    """``<operation xmlns="...">`` with the children of an encoded ``<input>``."""
    namespace = objects.namespace(module)
    nsmap: dict[str | None, str] = {None: namespace}
    nsmap.update(_prefixes(members_xml) if members_xml is not None else {})
    element = etree.Element(f"{{{namespace}}}{operation}", nsmap=nsmap)
    if members_xml is not None:
        element.extend(list(members_xml))
    return element


def _prefixes(element: Element) -> dict[str, str]:
    """Every prefix declared in ``element``'s subtree (identityref values use them), hoisted so
    that re-parenting into ``<rpc>`` cannot drop one whose URI is also the default."""
    found: dict[str, str] = {}
    for node in element.iter():
        for prefix, uri in node.nsmap.items():
            if prefix is not None:
                found.setdefault(prefix, uri)
    return found


def output_element(module: str, reply: Element) -> Element:
    """The reply's children (not ``<ok/>``) under an ``<output>`` element, as XML of output."""
    namespace = objects.namespace(module)
    output = etree.Element(f"{{{namespace}}}output", nsmap={None: namespace})
    for child in reply:
        if isinstance(child.tag, str) and etree.QName(child).namespace != BASE:
            output.append(child)
    return output


def _root(reply: Any) -> Element:
    """The ``<rpc-reply>`` element of an ncclient reply."""
    return etree.fromstring(reply.xml.encode(), _PARSER)


class NetconfTransport:
    """One NETCONF session to ``host:port`` as ``user`` (SSH key file or password)."""

    def __init__(  # noqa: PLR0913 - the SSH login's parts
        self,
        host: str,
        port: int,
        user: str,
        *,
        key: str | None = None,
        password: str | None = None,
        known_hosts: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        where = f"NETCONF {host}:{port}"
        self._where = where
        self._schema: Any = None
        try:
            self._manager = manager.connect(
                host=host,
                port=port,
                username=user,
                password=password,
                key_filename=key,
                hostkey_verify=known_hosts is not None,
                ssh_config=None,
                allow_agent=False,
                look_for_keys=False,
                timeout=timeout,
                manager_params={"timeout": timeout},
                **({"known_hosts": known_hosts} if known_hosts else {}),
            )
        except _TRANSPORT as exc:
            raise unreachable(where, exc) from exc

    def _run(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except RPCError as exc:
            raise _refused(exc) from exc
        except _TRANSPORT as exc:
            raise unreachable(self._where, exc) from exc

    def _get(self, module: str, name: str, *, config_only: bool) -> Element | None:
        """The container's element from ``<get>`` or ``<get-config>`` (None when absent)."""
        namespace = objects.namespace(module)
        subtree = etree.Element(f"{{{namespace}}}{name}", nsmap={None: namespace})
        if config_only:
            reply = self._run(self._manager.get_config, "running", filter=("subtree", subtree))
        else:
            reply = self._run(self._manager.get, filter=("subtree", subtree))
        found: Element | None = _root(reply).find(f"{{{BASE}}}data/{{{namespace}}}{name}")
        return found

    def read_members(self, module: str, name: str, *, config_only: bool) -> Json:
        """A top-level container as RFC 7951 members, converted by libyang (no objects)."""
        found = self._get(module, name, config_only=config_only)
        if found is None:
            return {}
        from controller.model import ModelError, nodes  # noqa: PLC0415 - bulk path only
        from controller.model.schema import Encoding  # noqa: PLC0415

        ctx = self._context()
        try:
            tree = nodes.parse_data(
                ctx, etree.tostring(found, encoding="unicode"), Encoding.XML, state=not config_only
            )
        except ModelError as exc:
            raise SdkError(*exc.items) from exc
        try:
            printed = nodes.print_tree(tree, Encoding.JSON, nodes.lib.LYD_PRINT_WITHSIBLINGS)
        finally:
            nodes.free_all(tree)
        loaded: Json = json.loads(printed or "{}").get(f"{module}:{name}", {})
        return loaded

    def read(self, obj: Binding, *, config_only: bool) -> Binding:
        """Fill ``obj`` (an empty top-level container) from ``<get>`` or ``<get-config>``."""
        found = self._get(obj._defining_module, obj._yang_name, config_only=config_only)
        if found is None:
            return obj
        try:
            return objects.load_xml(obj, found)
        except (ValueError, AttributeError, KeyError, TypeError) as exc:
            raise not_of_schema(f"{obj._yang_name} from {self._where}", exc) from exc

    def edit(self, obj: Binding, *, replace: bool, candidate: bool) -> None:
        """``<edit-config>`` of running (or the candidate): the node under its ancestors (with
        their keys), merged, or replacing the node."""
        element = objects.to_xml(obj)
        if replace:
            element.set(f"{{{BASE}}}operation", "replace")
        nsmap: dict[str | None, str] = {None: BASE}
        nsmap.update(_prefixes(element))
        config = etree.Element(f"{{{BASE}}}config", nsmap=nsmap)
        paths.skeleton(paths.steps(obj), config).append(element)
        self._edit_config(config, candidate=candidate)

    def delete(self, obj: Binding, *, candidate: bool) -> None:
        """``<edit-config>`` deleting a node (a container, or a list entry by its keys)."""
        path = paths.steps(obj)
        config = etree.Element(f"{{{BASE}}}config", nsmap={None: BASE})
        element = paths.leaf_element(paths.skeleton(path, config), path[-1])
        element.set(f"{{{BASE}}}operation", "delete")
        self._edit_config(config, candidate=candidate)

    def _edit_config(self, config: Element, *, candidate: bool) -> None:
        target = "candidate" if candidate else "running"
        self._run(self._manager.edit_config, target=target, config=config)

    def invoke(self, module: str, operation: str, request: Binding, output: Binding | None) -> None:
        """The RPC of the input object; ``output`` filled with the reply."""
        element = operation_element(module, operation, objects.to_xml(request))
        reply = self._run(self._manager.dispatch, element)
        if output is None:
            return  # <ok/>
        try:
            objects.load_xml(output, output_element(module, _root(reply)))
        except (ValueError, AttributeError, KeyError, TypeError) as exc:
            raise not_of_schema(f"{operation} reply from {self._where}", exc) from exc

    def invoke_members(self, module: str, operation: str, members: Json) -> Json:
        """The RPC of RFC 7951 input members and its output as members, both converted by
        libyang (no objects: this is the bulk path)."""
        element = self._members_xml(module, operation, members)
        reply = self._run(self._manager.dispatch, element)
        return self._reply_members(module, operation, _root(reply))

    def _reply_members(self, module: str, operation: str, reply: Element) -> Json:
        """The output members of an ``<rpc-reply>`` (``{}`` for ``<ok/>``), read by libyang
        as the operation's reply (``LYD_TYPE_REPLY_YANG``)."""
        from controller.model import ModelError, nodes  # noqa: PLC0415 - bulk path only
        from controller.model.schema import Encoding  # noqa: PLC0415

        output = output_element(module, reply)
        if len(output) == 0:
            return {}
        output.tag = f"{{{objects.namespace(module)}}}{operation}"
        text = etree.tostring(output, encoding="unicode")
        try:
            tree, op = nodes.parse_op(
                self._context(), text, Encoding.XML, nodes.lib.LYD_TYPE_REPLY_YANG
            )
        except ModelError as exc:
            raise not_of_schema(f"{operation} reply from {self._where}", exc) from exc
        try:
            printed = nodes.print_tree(op, Encoding.JSON)
        finally:
            nodes.free_all(tree)
        found: Json = json.loads(printed or "{}").get(f"{module}:{operation}", {})
        return found

    def _members_xml(self, module: str, operation: str, members: Json) -> Element:
        """The operation element of RFC 7951 input members, printed by libyang (RFC 7950 7.14)."""
        from controller.model import ModelError, nodes  # noqa: PLC0415 - bulk path only
        from controller.model.schema import Encoding  # noqa: PLC0415

        text = json.dumps({f"{module}:{operation}": members})
        ctx = self._context()
        try:
            tree, op = nodes.parse_op(ctx, text, Encoding.JSON, nodes.lib.LYD_TYPE_RPC_YANG)
        except ModelError as exc:
            raise SdkError(*exc.items) from exc
        try:
            printed = nodes.print_tree(op, Encoding.XML)
        finally:
            nodes.free_all(tree)
        element = etree.fromstring(printed.encode(), _PARSER)
        hoisted = etree.Element(element.tag, nsmap={**element.nsmap, **_prefixes(element)})
        hoisted.extend(list(element))
        return hoisted

    def _context(self) -> Any:
        """The libyang context of the CATS modules, compiled on the first bulk call."""
        if self._schema is None:
            from controller.model import Schema  # noqa: PLC0415 - bulk path only

            self._schema = Schema()
        return self._schema.context.cdata

    def commit(self, *, confirm_timeout: int | None = None) -> None:
        """``<commit>`` the candidate; with ``confirm_timeout`` a confirmed commit (RFC 6241
        8.4) that the server rolls back unless a plain commit follows within that many s."""
        if confirm_timeout is None:
            self._run(self._manager.commit)
        else:
            self._run(self._manager.commit, confirmed=True, timeout=str(confirm_timeout))

    def discard_changes(self) -> None:
        """``<discard-changes>``: the candidate back to running."""
        self._run(self._manager.discard_changes)

    def close(self) -> None:
        """``<close-session>`` and the SSH connection; the libyang context of the bulk path."""
        try:
            self._manager.close_session()
        except (*_TRANSPORT, RPCError):
            pass  # the session is gone either way
        if self._schema is not None:
            self._schema.close()

    def __repr__(self) -> str:
        return f"NetconfTransport({self._where})"
