"""Modelled RPCs and actions: validate input, run the handler, validate output (RFC 7950 7.14).

Input arrives in RESTCONF form (RFC 8040 3.6.1: ``{"mod:input": {...}}`` or
``<input xmlns="...">``) or in YANG form (``{"mod:rpc": {...}}``); it is rewritten to YANG form,
parsed with ``lyd_parse_op(LYD_TYPE_RPC_YANG)`` and validated with ``lyd_validate_op`` against
the running datastore (leafrefs into configuration resolve there). The handler's output dict is
parsed and validated as a reply (``LYD_TYPE_REPLY_YANG``) and returned in RESTCONF form
(``{"mod:output": {...}}``), or as an empty string when the operation has no output nodes.

The validated trees are never walked node by node: members and output are printed once by
libyang (JSON members go through ``json.loads``), and an RPC's :class:`Operation` is resolved
once per server core. Resolving it also decides, from the compiled schema, whether validating
its input or its output can read the datastore at all (:func:`reads_running`): when neither a
must, a when, a leafref nor an instance-identifier of that part reaches beyond the operation's
own nodes, it is validated without a dependency tree, so without the datastore lock.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from lxml import etree

from controller.datastore import datapath
from controller.datastore import schemawalk as sw
from controller.datastore.errors import operation_failed, refuse
from controller.errors import CatsError
from controller.model import nodes
from controller.model.nodes import Node
from controller.model.schema import Encoding
from controller.types import DataPath, SchemaPath

LOG = logging.getLogger(__name__)

# No entities, no network: RPC input comes from clients.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)

_RPC = nodes.lib.LYD_TYPE_RPC_YANG
_REPLY = nodes.lib.LYD_TYPE_REPLY_YANG
# The first member name of a JSON document (a qualified YANG name: no quotes, no escapes).
_FIRST_MEMBER = re.compile(r'\A\s*\{\s*"([^"\\]*)"\s*:')
# A start tag that declares namespace prefixes (libyang puts them where identityref values
# use them; text cannot hold "<" or ">", the printer escapes them), and one declaration.
_TAG_WITH_PREFIXES = re.compile(r"<[^<>/][^<>]*\sxmlns:[^<>]*>")
_PREFIX_DECLARATION = re.compile(r'\sxmlns:([A-Za-z_][\w.-]*)="([^"]*)"')


@dataclass(frozen=True, slots=True)
class Operation:
    """An RPC or action resolved against the schema: what invoking it needs of the schema."""

    path: DataPath  # invoked (an action's includes the list keys)
    schema: Any  # the compiled lysc_node of the RPC or action
    name: str  # module:name
    namespace: str
    schema_path: SchemaPath  # the path without predicates, the key of the handler
    is_rpc: bool
    input_reads_running: bool = True  # validating the input needs running (and its lock)
    output_reads_running: bool = True  # the same for the output

    @property
    def parallel(self) -> bool:
        """An RPC whose input and output validate without running: any process with the
        schema can validate them (twin contexts, RESTCONF worker processes)."""
        return self.is_rpc and not self.input_reads_running and not self.output_reads_running

    @property
    def module(self) -> str:
        """The module that defines the operation."""
        return self.name.split(":", 1)[0]


def resolve(ctx: Any, path: DataPath) -> Operation:
    """The operation at a data path; ``operation-not-supported`` if there is none."""
    schema = operation_schema(ctx, path)
    return Operation(
        path,
        schema,
        qualified_name(schema),
        nodes.ffi.string(schema.module.ns).decode(),
        datapath.schema_path(path),
        bool(schema.nodetype & nodes.lib.LYS_RPC),
        reads_running(schema, nodes.lib.LYS_INPUT),
        reads_running(schema, nodes.lib.LYS_OUTPUT),
    )


def reads_running(schema: Any, part: int) -> bool:
    """Whether validating the input (``part`` LYS_INPUT) or output (LYS_OUTPUT) of an operation
    can read the datastore (RFC 7950 7.14.2: its leafrefs and XPath resolve in running).

    Yes for an action (its parents are running's), and for an RPC whose part has a must, a
    when or a leafref that may read a node outside the operation (libyang's
    ``lys_find_expr_atoms``; yes when it cannot tell), or an instance-identifier. Asked once
    per operation, on the compiled schema; a "no" lets the caller validate that part with no
    dependency tree, which gives the same answer without the datastore lock.
    """
    if not schema.nodetype & nodes.lib.LYS_RPC:
        return True
    child = nodes.lib.lysc_node_child(schema)  # the input, then the output
    while child and not child.nodetype & part:
        child = child.next
    return bool(child) and _reaches_out(child, schema)


def notification_reads_running(schema: Any) -> bool:
    """Whether validating a notification can read the datastore, as :func:`reads_running`
    decides for an RPC's input (a notification inside data: yes, its parents are running's).
    """
    return bool(schema.parent) or _reaches_out(schema, schema)


def _reaches_out(root: Any, operation: Any) -> bool:
    """Whether a must, when or leafref under ``root`` may read a node outside ``operation``,
    or an instance-identifier is there."""
    for snode in sw.walk(root):
        for context, expr, prefixes in sw.expressions(snode):
            if not _inside(sw.atoms(context, snode, expr, prefixes), operation):
                return True
        for ltype in sw.leafref_types(snode):
            if ltype.basetype != sw.LEAFREF:
                return True  # an instance-identifier names any node of the datastore
            lref = nodes.ffi.cast("struct lysc_type_leafref *", ltype)
            if not _inside(sw.atoms(snode, snode, lref.path, lref.prefixes), operation):
                return True
    return False


def _inside(atoms: list[Any] | None, schema: Any) -> bool:
    """Whether every node an expression may read lies within the operation's schema node."""
    return atoms is not None and all(sw.within(atom, schema) for atom in atoms)


def operation_schema(ctx: Any, path: DataPath) -> Any:
    """The compiled RPC or action node at a data path; ``operation-not-supported`` if none."""
    schema = nodes.lib.lys_find_path(ctx, nodes.ffi.NULL, datapath.schema_path(path).encode(), 0)
    nodes.lib.ly_err_clean(ctx, nodes.ffi.NULL)
    if not schema or not schema.nodetype & (nodes.lib.LYS_RPC | nodes.lib.LYS_ACTION):
        raise refuse("operation-not-supported", f"no such operation: {path}", path)
    return schema


def qualified_name(schema: Any) -> str:
    """``module:name`` of a schema node."""
    module = nodes.ffi.string(schema.module.name).decode()
    return f"{module}:{nodes.ffi.string(schema.name).decode()}"


def _unwrapped(document: str, name: str) -> tuple[dict[str, object], bool]:
    """The input members, and whether the document was exactly one wrapper (``mod:input``
    or ``mod:name``) holding them."""
    if not document.strip():
        return {}, False
    try:
        loaded = json.loads(document)
    except ValueError as exc:
        raise refuse("malformed-message", f"malformed JSON input: {exc}") from exc
    if not isinstance(loaded, dict):
        raise refuse("malformed-message", "the input must be a JSON object")
    module = name.split(":", 1)[0]
    for wrapper in (f"{module}:input", name):
        if set(loaded) == {wrapper}:
            inner = loaded[wrapper]
            return (inner, True) if isinstance(inner, dict) else ({}, False)
    return loaded, False


def first_member(document: str) -> re.Match[str] | None:
    """Where the first member name of a JSON object document ends (``group(1)`` the name),
    None when the document does not start so (or the name has an escape)."""
    return _FIRST_MEMBER.match(document)


def _renamed(document: str, operation: Operation) -> str | None:
    """A wrapped RPC input (:func:`_unwrapped` said so) in YANG form by renaming the wrapper
    in the text (``mod:input`` becomes ``mod:name``); None when it is written otherwise (an
    escape in the name).

    A report of a hundred entries is encoded again by Python otherwise, for libyang to parse
    what the client sent. The document was decoded once already: libyang accepts text after
    the first JSON value, so that decoding is what refuses it.
    """
    found = first_member(document)
    if found is None or found.group(1) not in (f"{operation.module}:input", operation.name):
        return None
    return f'{{"{operation.name}":{document[found.end() :]}'


def envelope(ctx: Any, path: DataPath, schema: Any, members: dict[str, object]) -> str:
    """The YANG-form JSON document of an operation invocation (actions: with their parents)."""
    name = qualified_name(schema)
    if schema.nodetype & nodes.lib.LYS_RPC:
        return json.dumps({name: members})
    parents = nodes.new_path(ctx, None, datapath.parent(path))
    try:
        holder = nodes.find(ctx, parents, datapath.parent(path))
        text = nodes.print_tree(nodes.top_of(holder), Encoding.JSON)
    finally:
        nodes.free_all(parents)
    document = json.loads(text)
    _innermost(document)[name.split(":", 1)[1]] = members
    return json.dumps(document)


def _innermost(document: dict[str, Any]) -> dict[str, Any]:
    """The deepest object of a single-path JSON document (a list entry's object)."""
    current: Any = document
    while True:
        member = next((v for v in current.values() if isinstance(v, dict | list)), None)
        if member is None:
            return dict[str, Any](current) if not isinstance(current, dict) else current
        current = member[0] if isinstance(member, list) else member


def xml_to_yang_form(document: str, schema: Any) -> str:
    """Rename a RESTCONF ``<input>`` root to the RPC's name (RPCs only).

    lxml keeps every namespace declaration of the document, including those that only
    identityref values use (``<objective>sm:minimize-latency</objective>``).
    """
    try:
        root = etree.fromstring(document.encode(), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise refuse("malformed-message", f"malformed XML input: {exc}") from exc
    namespace = nodes.ffi.string(schema.module.ns).decode()
    if root.tag != f"{{{namespace}}}input":
        return document
    root.tag = f"{{{namespace}}}{nodes.ffi.string(schema.name).decode()}"
    return str(etree.tostring(root, encoding="unicode"))


def parse_input(
    ctx: Any, operation: Operation, document: str, encoding: Encoding
) -> tuple[Node, Node]:
    """Parse an invocation (types are checked here); the whole tree, which the caller frees,
    and the operation node in it. It reads the schema only, so it needs no datastore lock."""
    schema = operation.schema
    if encoding is Encoding.JSON:
        members, wrapped = _unwrapped(document, operation.name)
        text = _renamed(document, operation) if wrapped and operation.is_rpc else None
        if text is None:
            text = envelope(ctx, operation.path, schema, members)
    else:
        text = xml_to_yang_form(document, schema) if document.strip() else ""
    return nodes.parse_op(ctx, text, encoding, _RPC)


def validate_input(ctx: Any, tree: Node, dep: Node) -> None:
    """``lyd_validate_op`` of a parsed invocation against ``dep`` (running: leafrefs into
    configuration resolve there), so the caller holds the lock that guards ``dep``; or with
    ``dep`` None when the operation's ``input_reads_running`` is False (no lock needed)."""
    if nodes.lib.lyd_validate_op(tree, dep or nodes.ffi.NULL, _RPC, nodes.ffi.NULL):
        raise nodes.fail(ctx)


def members_of(op: Node, operation: Operation) -> dict[str, object]:
    """The input of a parsed invocation as RFC 7951 members (printed once, ``json.loads``)."""
    if op is None or op == nodes.ffi.NULL:
        return {}
    document: dict[str, Any] = json.loads(nodes.print_tree(op, Encoding.JSON) or "{}")
    inner: Any = next(iter(document.values()), {})
    if isinstance(inner, list):  # an action on a list entry prints as that entry
        inner = inner[0]
    if not inner:
        return {}
    if operation.is_rpc:  # an RPC has no list keys to drop
        return dict(inner)
    return {k: v for k, v in inner.items() if k not in _keys(op)}


#: Running's tree for a validation that reads it, held (under the core's lock) only meanwhile.
Running = Callable[[], AbstractContextManager[Node]]


def input_members(
    ctx: Any, operation: Operation, document: str, encoding: Encoding, running: Running | None
) -> dict[str, object]:
    """The validated input of an invocation as RFC 7951 members: parsed in ``ctx`` (no lock),
    validated against ``running`` (held only for the validation; None when the operation's
    ``input_reads_running`` is False) and freed."""
    tree, op = parse_input(ctx, operation, document, encoding)
    try:
        _against(running, lambda dep: validate_input(ctx, tree, dep))
        return members_of(op, operation)
    finally:
        nodes.free_all(tree)


def _against(running: Running | None, validate: Callable[[Node], None]) -> None:
    """``validate`` with running's tree held meanwhile, or with None (no dependency tree)."""
    if running is None:
        validate(None)
        return
    with running() as dep:
        validate(dep)


def output_document(
    ctx: Any,
    operation: Operation,
    output: dict[str, object],
    encoding: Encoding,
    running: Running | None,
) -> str:
    """A handler's output validated as the reply (against ``running`` as in
    :func:`input_members`) and printed in RESTCONF form (``""`` without output nodes);
    ``operation-failed`` (logged) for output that is not valid."""
    try:
        tree, op = parse_output(ctx, operation, output)
        try:
            _against(running, lambda dep: validate_output(ctx, tree, dep))
            return print_output(op, operation, encoding)
        finally:
            nodes.free_all(tree)
    except CatsError as exc:  # the server's fault, not the client's (RFC 7950 7.14.3)
        path = operation.path
        LOG.error("the handler of %s returned invalid output: %s", path, exc)
        raise operation_failed(f"the handler of {path} returned invalid output", path) from exc


def _keys(node: Node) -> set[str]:
    return {nodes.name_of(c) for c in nodes.children(node) if c.schema.flags & nodes.lib.LYS_KEY}


def parse_output(ctx: Any, operation: Operation, output: dict[str, object]) -> tuple[Node, Node]:
    """Parse the handler's output as a reply (no datastore lock needed); the whole tree, which
    the caller frees, and the operation node in it."""
    text = envelope(ctx, operation.path, operation.schema, output)
    return nodes.parse_op(ctx, text, Encoding.JSON, _REPLY)


def validate_output(ctx: Any, tree: Node, dep: Node) -> None:
    """``lyd_validate_op`` of a parsed reply against ``dep`` (the caller holds its lock), or
    with ``dep`` None when the operation's ``output_reads_running`` is False."""
    if nodes.lib.lyd_validate_op(tree, dep or nodes.ffi.NULL, _REPLY, nodes.ffi.NULL):
        raise nodes.fail(ctx)


def print_output(op: Node, operation: Operation, encoding: Encoding) -> str:
    """A validated reply in RESTCONF form (``""`` when it has no output nodes)."""
    if not _has_output(op):
        return ""
    if operation.is_rpc:
        return _rpc_output(op, operation, encoding)
    return _action_output(op, operation, encoding)


def _has_output(op: Node) -> bool:
    """Whether the reply has an output node (stops at the first one that is not a key)."""
    return any(not c.schema.flags & nodes.lib.LYS_KEY for c in nodes.children(op))


def _rpc_output(op: Node, operation: Operation, encoding: Encoding) -> str:
    """The RPC's reply printed once, its root renamed to ``output`` (RFC 8040 3.6.2)."""
    if encoding is Encoding.JSON:
        printed = nodes.print_tree(op, Encoding.JSON)
        found = first_member(printed)
        if found is not None:
            return f'{{\n  "{operation.module}:output":{printed[found.end() :]}'
        inner = next(iter(json.loads(printed).values()))  # not libyang's usual layout
        return json.dumps({f"{operation.module}:output": inner}, indent=2)
    printed = nodes.print_tree(op, Encoding.XML, nodes.lib.LYD_PRINT_SHRINK)
    return _output_element(etree.fromstring(printed.encode(), _PARSER), printed, operation)


def _output_element(root: Any, printed: str, operation: Operation) -> str:
    """``<output>`` with the children of ``root``, each declaring the default namespace and the
    prefixes of identityref values printed anywhere in the reply.

    NETCONF moves these children into its rpc-reply; lxml drops a prefix declaration there
    when the default namespace in scope has the same URI, though a value still uses it.
    """
    namespace = operation.namespace
    declared = (
        d for t in _TAG_WITH_PREFIXES.findall(printed) for d in _PREFIX_DECLARATION.findall(t)
    )
    nsmap = {None: namespace, **dict(declared)}
    wrapper = etree.Element(f"{{{namespace}}}output", nsmap={None: namespace})
    for child in list(root):
        top = etree.SubElement(wrapper, child.tag, attrib=dict(child.attrib), nsmap=nsmap)
        top.text = child.text
        top.extend(list(child))
    return str(etree.tostring(wrapper, encoding="unicode"))


def _action_output(op: Node, operation: Operation, encoding: Encoding) -> str:
    """An action's reply: its output children, without the keys of the list entry."""
    kids = [c for c in nodes.children(op) if not c.schema.flags & nodes.lib.LYS_KEY]
    if encoding is Encoding.JSON:
        printed = json.loads(nodes.print_tree(op, Encoding.JSON))
        inner = next(iter(printed.values()))
        return json.dumps({f"{operation.module}:output": inner}, indent=2)
    namespace = operation.namespace
    wrapper = etree.Element(f"{{{namespace}}}output", nsmap={None: namespace})
    for child in kids:
        wrapper.append(etree.fromstring(nodes.print_tree(child, Encoding.XML).encode(), _PARSER))
    return str(etree.tostring(wrapper, encoding="unicode"))
