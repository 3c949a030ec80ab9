"""Request bodies of PUT, POST and plain PATCH (RFC 8040 4.4-4.6), checked against the URI.

A body must hold exactly one instance of the node it is for: the target itself for PUT and
PATCH, a child of the target for POST. The key values a URI gives must be the body's, so
``PUT .../entry=5`` with ``"id": 6`` is refused here (400 invalid-value) before the core sees it.
Values are not otherwise checked: the core validates them with libyang.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lxml import etree

from controller.model import Encoding
from controller.model.limits import LimitError, unique_members
from controller.model.paths import (
    NodeKind,
    PathResolver,
    ResolvedPath,
    SchemaNode,
    Step,
    build_data_path,
)
from controller.restconf.errors import RESTCONF_NS, protocol_error

_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_comments=True
)


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed body: its single top-level member, with the value or element it holds."""

    module: str | None  # None when a JSON member name is not module-qualified
    name: str
    value: Any  # the JSON value, or the lxml element
    encoding: Encoding


def malformed(message: str) -> Exception:
    """A body that is not a document of its media type (400 malformed-message)."""
    return protocol_error(400, "malformed-message", message)


def _invalid(message: str, path: str | None = None) -> Exception:
    return protocol_error(400, "invalid-value", message, path)


def parse_json(text: str) -> Any:
    """JSON text, or 400 malformed-message (also for a member name twice in one object, which
    RFC 7951 relies on never happening, and for nesting deeper than the parser goes)."""
    try:
        return json.loads(text, object_pairs_hook=unique_members)
    except LimitError as exc:
        raise malformed(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise malformed("malformed JSON: objects and arrays nested too deep") from None
    except ValueError as exc:
        raise malformed(f"malformed JSON: {exc}") from None


def parse_xml(text: str) -> Any:
    """An XML element, or 400 malformed-message (no entities, no DTD, no network)."""
    try:
        return etree.fromstring(text.encode(), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise malformed(f"malformed XML: {exc}") from None


def parse_document(text: str, encoding: Encoding, resolver: PathResolver) -> Document:
    """The single top-level member of a body (RFC 8040 4.4.1: exactly one instance)."""
    if encoding is Encoding.JSON:
        value = parse_json(text)
        if not isinstance(value, dict) or len(value) != 1:
            raise _invalid("the body must be a JSON object with exactly one member")
        member, inner = next(iter(value.items()))
        module, _, name = member.rpartition(":")
        return Document(module or None, name, inner, encoding)
    element = parse_xml(text)
    qname = etree.QName(element)
    module = resolver.module_of(qname.namespace or "")
    if module is None:
        raise protocol_error(
            400, "unknown-namespace", f"no module has the namespace {qname.namespace!r}"
        )
    return Document(module, qname.localname, element, encoding)


def _scalar(value: Any) -> str:
    """A JSON key value as the URI writes it (RFC 7951 6: booleans, numbers, strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    raise _invalid(f"a key value must be a string, number or boolean, not {value!r}")


def _entry(doc: Document) -> Any:
    """The one list entry a JSON body holds (RFC 7951 5.4: an array of one object)."""
    value = doc.value
    if isinstance(value, list):
        if len(value) != 1:
            raise _invalid(f"the body must hold exactly one {doc.name!r} entry")
        value = value[0]
    return value


def key_values(doc: Document, node: SchemaNode) -> tuple[str, ...] | None:
    """The key values (or leaf-list value) the body gives for a list or leaf-list node."""
    if node.kind is NodeKind.LEAF_LIST:
        if doc.encoding is Encoding.XML:
            return ((doc.value.text or "").strip(),)
        entry = _entry(doc)
        return (_scalar(entry),)
    if node.kind is not NodeKind.LIST:
        return None
    values: list[str] = []
    for key in node.keys:
        if doc.encoding is Encoding.XML:
            found = doc.value.find(f"{{{node.namespace}}}{key}")
            text = found.text if found is not None else None
        else:
            entry = _entry(doc)
            if not isinstance(entry, dict):
                raise _invalid(f"a {node.name!r} entry must be a JSON object")
            raw = entry.get(key, entry.get(f"{node.module}:{key}"))
            text = None if raw is None else _scalar(raw)
        if text is None:
            raise protocol_error(400, "missing-element", f"key {key!r} missing from the body")
        values.append(text.strip() if doc.encoding is Encoding.XML else text)
    return tuple(values)


def _qualified(doc: Document, node: SchemaNode, original: str) -> str:
    """The body with its top-level member module-qualified (RFC 7951 4), as the core takes it."""
    if doc.encoding is Encoding.XML or doc.module is not None:
        return original
    return json.dumps({node.qualified_name: doc.value})


def target_body(text: str, encoding: Encoding, target: ResolvedPath, resolver: PathResolver) -> str:
    """Check a PUT or plain PATCH body against its target; return it for the core.

    Raises:
        RestconfError: 400 when the body names another node or other key values.
    """
    node = target.node
    if node is None:
        return root_body(text, encoding)
    doc = parse_document(text, encoding, resolver)
    if (doc.module or node.module, doc.name) != (node.module, node.name):
        shown = f"{doc.module}:{doc.name}" if doc.module else doc.name
        raise _invalid(f"the body holds {shown!r}, not {node.qualified_name!r}", target.data_path)
    given = key_values(doc, node)
    if target.values is not None and given != target.values:
        same = given is not None and (
            resolver.canonical(node, given) == resolver.canonical(node, target.values)
        )
        if not same:  # ``1.50`` in the body and ``1.5`` in the URI name one decimal64 key
            raise _invalid("the key values of the body differ from the URI's", target.data_path)
    return _qualified(doc, node, text)


def child_body(
    text: str, encoding: Encoding, target: ResolvedPath, resolver: PathResolver
) -> tuple[ResolvedPath, str]:
    """The child a POST body creates (RFC 8040 4.4.1), its path and the body for the core."""
    parent = target.node
    if parent is not None and (
        parent.kind in (NodeKind.LEAF, NodeKind.LEAF_LIST)
        or (parent.kind is NodeKind.LIST and target.values is None)
    ):
        raise _invalid(f"{parent.name!r} cannot hold a created child", target.data_path)
    doc = parse_document(text, encoding, resolver)
    member = f"{doc.module}:{doc.name}" if doc.module else doc.name
    child = resolver.resolve_child(target, member)
    steps = (*target.steps, Step(child, key_values(doc, child)))
    return ResolvedPath(steps, build_data_path(steps)), _qualified(doc, child, text)


def root_body(text: str, encoding: Encoding) -> str:
    """The datastore content of a PUT or PATCH on the root: ``ietf-restconf:data`` unwrapped."""
    if encoding is Encoding.JSON:
        value = parse_json(text)
        if not isinstance(value, dict) or set(value) != {"ietf-restconf:data"}:
            raise _invalid("a body for the datastore root is one 'ietf-restconf:data' object")
        inner = value["ietf-restconf:data"]
        if not isinstance(inner, dict):
            raise _invalid("'ietf-restconf:data' must be an object")
        return json.dumps(inner)
    element = parse_xml(text)
    if element.tag != f"{{{RESTCONF_NS}}}data":
        raise _invalid("a body for the datastore root is one ietf-restconf 'data' element")
    return "".join(etree.tostring(child, encoding="unicode") for child in element)
