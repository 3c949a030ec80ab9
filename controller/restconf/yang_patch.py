"""YANG Patch (RFC 8072): the patch document to core edits, and ``yang-patch-status`` back."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from controller.datastore.api import Edit, EditOperation, InsertWhere
from controller.errors import ErrorItem
from controller.model import Encoding
from controller.model.paths import NodeKind, PathResolver, ResolvedPath
from controller.restconf.bodies import parse_json, parse_xml, target_body
from controller.restconf.errors import errors_json, protocol_error
from controller.types import DataPath

YANG_PATCH_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-patch"
_NEEDS_VALUE = {
    EditOperation.CREATE,
    EditOperation.MERGE,
    EditOperation.REPLACE,
    EditOperation.INSERT,
}
_NEEDS_WHERE = {EditOperation.INSERT, EditOperation.MOVE}


@dataclass(frozen=True, slots=True)
class PatchEdit:
    """One ``edit`` of a patch, before its paths are resolved."""

    edit_id: str
    operation: str
    target: str
    where: str | None = None
    point: str | None = None
    value: str | None = None  # the value's one node, in the patch's encoding


@dataclass(frozen=True, slots=True)
class Patch:
    """A parsed YANG Patch: its id and its edits, in order."""

    patch_id: str
    edits: tuple[PatchEdit, ...]


def _invalid(message: str) -> Exception:
    return protocol_error(400, "invalid-value", message)


def _json_edit(raw: Any) -> PatchEdit:
    if not isinstance(raw, dict):
        raise _invalid("each edit must be an object")
    for name in ("edit-id", "operation", "target"):
        if not isinstance(raw.get(name), str):
            raise protocol_error(400, "missing-element", f"an edit needs {name!r}")
    value = raw.get("value")
    return PatchEdit(
        edit_id=raw["edit-id"],
        operation=raw["operation"],
        target=raw["target"],
        where=raw.get("where"),
        point=raw.get("point"),
        value=json.dumps(value) if value is not None else None,
    )


def _parse_json(text: str) -> Patch:
    document = parse_json(text)
    patch = document.get("ietf-yang-patch:yang-patch") if isinstance(document, dict) else None
    if not isinstance(patch, dict) or len(document) != 1:
        raise _invalid("the body must be one 'ietf-yang-patch:yang-patch' object")
    edits = patch.get("edit", [])
    if not isinstance(patch.get("patch-id"), str) or not isinstance(edits, list):
        raise protocol_error(400, "missing-element", "a yang-patch needs 'patch-id' and 'edit'")
    return Patch(patch["patch-id"], tuple(_json_edit(edit) for edit in edits))


def _text(element: Any, name: str) -> str | None:
    found = element.find(f"{{{YANG_PATCH_NS}}}{name}")
    return None if found is None else (found.text or "").strip()


def _xml_edit(element: Any) -> PatchEdit:
    fields = {name: _text(element, name) for name in ("edit-id", "operation", "target")}
    for name, found in fields.items():
        if found is None:
            raise protocol_error(400, "missing-element", f"an edit needs {name!r}")
    value = element.find(f"{{{YANG_PATCH_NS}}}value")
    children = list(value) if value is not None else []
    if len(children) > 1:
        raise _invalid("an edit value holds one node")
    return PatchEdit(
        edit_id=fields["edit-id"] or "",
        operation=fields["operation"] or "",
        target=fields["target"] or "",
        where=_text(element, "where"),
        point=_text(element, "point"),
        value=etree.tostring(children[0], encoding="unicode") if children else None,
    )


def _parse_xml(text: str) -> Patch:
    root = parse_xml(text)
    patch_id = _text(root, "patch-id")
    if root.tag != f"{{{YANG_PATCH_NS}}}yang-patch" or patch_id is None:
        raise _invalid("the body must be one ietf-yang-patch 'yang-patch' with a 'patch-id'")
    edits = root.findall(f"{{{YANG_PATCH_NS}}}edit")
    return Patch(patch_id, tuple(_xml_edit(edit) for edit in edits))


def parse_patch(text: str, encoding: Encoding) -> Patch:
    """Parse a YANG Patch document (RFC 8072 2.2)."""
    patch = _parse_json(text) if encoding is Encoding.JSON else _parse_xml(text)
    ids = [edit.edit_id for edit in patch.edits]
    if len(set(ids)) != len(ids):
        raise _invalid("edit-id values must be unique")
    return patch


def _resolved_target(base: str, target: str, resolver: PathResolver) -> ResolvedPath:
    """An edit target is a path relative to the patch's resource (RFC 8072 2.2)."""
    if not target.startswith("/"):
        raise _invalid(f"an edit target starts with '/': {target!r}")
    return resolver.resolve(base.rstrip("/") + ("" if target == "/" else target))


def to_edits(patch: Patch, base: str, encoding: Encoding, resolver: PathResolver) -> list[Edit]:
    """The core edits of a patch whose resource is at api-path ``base``.

    Raises:
        RestconfError: 400 for an unknown operation, a missing value or position, a target
            that names nothing, or a value that is not the target.
    """
    edits: list[Edit] = []
    for item in patch.edits:
        try:
            operation = EditOperation(item.operation)
        except ValueError:
            raise _invalid(f"edit {item.edit_id!r}: unknown operation {item.operation!r}") from None
        target = _resolved_target(base, item.target, resolver)
        value = None
        if operation in _NEEDS_VALUE:
            if item.value is None:
                raise protocol_error(
                    400, "missing-element", f"edit {item.edit_id!r}: {operation} needs a value"
                )
            value = target_body(item.value, encoding, target, resolver)
        where, point = _position(item, operation, base, resolver)
        if target.node is not None and target.node.kind is NodeKind.LIST and target.values is None:
            raise _invalid(f"edit {item.edit_id!r}: the target must name one list entry")
        edits.append(Edit(operation, target.data_path, value, encoding, where, point))
    return edits


def _position(
    item: PatchEdit, operation: EditOperation, base: str, resolver: PathResolver
) -> tuple[InsertWhere | None, DataPath | None]:
    if operation not in _NEEDS_WHERE:
        return None, None
    try:
        where = InsertWhere(item.where or "last")
    except ValueError:
        raise _invalid(f"edit {item.edit_id!r}: unknown where {item.where!r}") from None
    if where in (InsertWhere.BEFORE, InsertWhere.AFTER):
        if item.point is None:
            raise protocol_error(400, "missing-element", f"edit {item.edit_id!r} needs a point")
        return where, _resolved_target(base, item.point, resolver).data_path
    return where, None


def status_document(
    patch_id: str,
    errors: Sequence[ErrorItem] | None,
    encoding: Encoding,
    to_xml: Callable[[Sequence[ErrorItem]], bytes],
) -> bytes:
    """The ``ietf-yang-patch:yang-patch-status`` reply (RFC 8072 2.3): ok, or global errors.

    The core applies a patch as one transaction, so a failure is reported in
    ``global-errors`` and no edit is applied.
    """
    if encoding is Encoding.JSON:
        status: dict[str, object] = {"patch-id": patch_id}
        if errors:
            status["errors"] = errors_json(errors)["ietf-restconf:errors"]
        else:
            status["ok"] = [None]
        return json.dumps({"ietf-yang-patch:yang-patch-status": status}, indent=2).encode()
    root = etree.Element(f"{{{YANG_PATCH_NS}}}yang-patch-status", nsmap={None: YANG_PATCH_NS})
    etree.SubElement(root, f"{{{YANG_PATCH_NS}}}patch-id").text = patch_id
    if errors:
        root.append(etree.fromstring(to_xml(errors)))
    else:
        etree.SubElement(root, f"{{{YANG_PATCH_NS}}}ok")
    return bytes(etree.tostring(root, encoding="utf-8"))
