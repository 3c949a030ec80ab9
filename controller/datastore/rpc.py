"""Modelled RPCs and actions: validate input, run the handler, validate output (RFC 7950 7.14).

Input arrives in RESTCONF form (RFC 8040 3.6.1: ``{"mod:input": {...}}`` or
``<input xmlns="...">``) or in YANG form (``{"mod:rpc": {...}}``); it is rewritten to YANG form,
parsed with ``lyd_parse_op(LYD_TYPE_RPC_YANG)`` and validated with ``lyd_validate_op`` against
the running datastore (leafrefs into configuration resolve there). The handler's output dict is
parsed and validated as a reply (``LYD_TYPE_REPLY_YANG``) and returned in RESTCONF form
(``{"mod:output": {...}}``), or as an empty string when the operation has no output nodes.
"""

from __future__ import annotations

import json
from typing import Any

from lxml import etree

from controller.datastore import datapath
from controller.datastore.errors import refuse
from controller.model import nodes
from controller.model.nodes import Node
from controller.model.schema import Encoding

# No entities, no network: RPC input comes from clients.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)

_RPC = nodes.lib.LYD_TYPE_RPC_YANG
_REPLY = nodes.lib.LYD_TYPE_REPLY_YANG


def operation_schema(ctx: Any, path: str) -> Any:
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


def input_json(document: str, name: str) -> dict[str, object]:
    """The input members of a JSON request in either form (empty for no input)."""
    if not document.strip():
        return {}
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
            return inner if isinstance(inner, dict) else {}
    return loaded


def envelope(ctx: Any, path: str, schema: Any, members: dict[str, object]) -> str:
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


def parse_input(ctx: Any, path: str, document: str, encoding: Encoding, dep: Node) -> Node:
    """Parse and validate an invocation; returns the whole tree (the caller frees it)."""
    schema = operation_schema(ctx, path)
    if encoding is Encoding.JSON:
        text = envelope(ctx, path, schema, input_json(document, qualified_name(schema)))
    else:
        text = xml_to_yang_form(document, schema) if document.strip() else ""
    tree, op = nodes.parse_op(ctx, text, encoding, _RPC)
    if nodes.lib.lyd_validate_op(tree, dep or nodes.ffi.NULL, _RPC, nodes.ffi.NULL):
        nodes.free_all(tree)
        raise nodes.fail(ctx)
    del op
    return tree


def members_of(ctx: Any, tree: Node, path: str) -> dict[str, object]:
    """The input of a parsed invocation as RFC 7951 members."""
    op = nodes.find(ctx, tree, path)
    if op is None:
        return {}
    document: dict[str, Any] = json.loads(nodes.print_tree(op, Encoding.JSON) or "{}")
    inner: Any = next(iter(document.values()), {})
    if isinstance(inner, list):  # an action on a list entry prints as that entry
        inner = inner[0]
    return {k: v for k, v in inner.items() if k not in _keys(op)} if inner else {}


def _keys(node: Node) -> set[str]:
    return {nodes.name_of(c) for c in nodes.children(node) if c.schema.flags & nodes.lib.LYS_KEY}


def build_output(
    ctx: Any, path: str, output: dict[str, object], encoding: Encoding, dep: Node
) -> str:
    """Validate the handler's output as a reply and print it in RESTCONF form."""
    schema = operation_schema(ctx, path)
    text = envelope(ctx, path, schema, output)
    tree, op = nodes.parse_op(ctx, text, Encoding.JSON, _REPLY)
    try:
        if nodes.lib.lyd_validate_op(tree, dep or nodes.ffi.NULL, _REPLY, nodes.ffi.NULL):
            raise nodes.fail(ctx)
        module = nodes.ffi.string(schema.module.name).decode()
        kids = [c for c in nodes.children(op) if not c.schema.flags & nodes.lib.LYS_KEY]
        if not kids:
            return ""
        if encoding is Encoding.JSON:
            printed = json.loads(nodes.print_tree(op, Encoding.JSON))
            inner = next(iter(printed.values()))
            return json.dumps({f"{module}:output": inner}, indent=2)
        namespace = nodes.ffi.string(schema.module.ns).decode()
        wrapper = etree.Element(f"{{{namespace}}}output", nsmap={None: namespace})
        for child in kids:
            wrapper.append(
                etree.fromstring(nodes.print_tree(child, Encoding.XML).encode(), _PARSER)
            )
        return str(etree.tostring(wrapper, encoding="unicode"))
    finally:
        nodes.free_all(tree)
