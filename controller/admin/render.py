"""cats-controller-admin documents: compare results, commit entries and audit records (JSON).

Pure: values in, RFC 7951 members out. A comparison is answered twice, as the edits of a YANG
Patch (RFC 8072 2.1's structure, values as JSON text) and as a unified diff of the pretty-printed
JSON of each changed subtree (``difflib``), headed by the two configurations' names.
"""

from __future__ import annotations

import difflib
import json

from controller.audit import AuditRecord, CommitEntry
from controller.datastore.compare import ChangeItem
from controller.types import Json

MODULE = "cats-controller-admin"


def _pretty(document: str | None) -> list[str]:
    if document is None:
        return []
    return json.dumps(json.loads(document), indent=2, sort_keys=False).splitlines(keepends=True)


def yang_patch(items: list[ChangeItem], patch_id: str) -> Json:
    """The ``yang-patch`` container: one edit per change, in order."""
    edits: list[Json] = []
    for number, item in enumerate(items, start=1):
        edit: Json = {"edit-id": str(number), "operation": item.operation, "target": item.path}
        if item.where is not None:
            edit["where"] = item.where
        if item.point is not None:
            edit["point"] = item.point
        if item.new is not None and item.operation != "move":
            edit["value"] = item.new
        edits.append(edit)
    patch: Json = {"patch-id": patch_id}
    if edits:
        patch["edit"] = edits
    return patch


def unified_diff(items: list[ChangeItem], source: str, target: str) -> str:
    """One unified diff per change, ``--- source path`` / ``+++ target path``."""
    lines: list[str] = []
    for item in items:
        if item.operation == "move":
            place = f"before {item.point}" if item.where == "before" else "last"
            lines += [f"--- {source} {item.path}\n", f"+++ {target} {item.path}\n"]
            lines.append(f"@@ moved {place} @@\n")
            continue
        lines.extend(
            difflib.unified_diff(
                _pretty(item.old),
                _pretty(item.new),
                f"{source} {item.path}",
                f"{target} {item.path}",
                n=3,
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def compare_result(items: list[ChangeItem], source: str, target: str) -> Json:
    """The ``compare-result`` grouping's members."""
    return {
        "changes": len(items),
        "yang-patch": yang_patch(items, f"compare {source} {target}"),
        "unified-diff": unified_diff(items, source, target),
    }


def commit_json(entry: CommitEntry) -> Json:
    """One ``commits/commit``."""
    values: Json = {
        "id": str(entry.id),
        "time": entry.time,
        "user": entry.user,
        "session-id": entry.session,
        "transport": entry.transport,
        "source-address": entry.source or None,
        "operation": entry.operation,
        "comment": entry.comment,
        "label": entry.label,
        "edits": entry.edits,
    }
    if entry.changed:
        values["changed"] = list(entry.changed)
    return {name: value for name, value in values.items() if value is not None}


def commits_json(entries: list[CommitEntry], kept: int) -> Json:
    """The ``commits`` container, newest first."""
    values: Json = {"kept": kept}
    if entries:
        values["commit"] = [commit_json(entry) for entry in entries]
    return {f"{MODULE}:commits": values}


def audit_json(records: list[AuditRecord]) -> Json:
    """The ``audit`` container, oldest first."""
    rendered: list[Json] = []
    for record in records:
        values: Json = {
            "id": str(record.id),
            "time": record.time,
            "event": record.event,
            "user": record.user,
            "session-id": record.session,
            "transport": record.transport,
            "source-address": record.source or None,
            "commit-id": None if record.commit_id is None else str(record.commit_id),
            "detail": record.detail or None,
            "node": record.node,
        }
        rendered.append({name: value for name, value in values.items() if value is not None})
    return {f"{MODULE}:audit": {"record": rendered} if rendered else {}}
