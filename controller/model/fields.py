"""RFC 8040 4.8.3 ``fields``: the expression as node paths relative to the target."""

from __future__ import annotations

from typing import Protocol

from controller.errors import ErrorItem, ErrorType
from controller.model.errors import ModelError
from controller.model.paths import SchemaNode


def expand_fields(fields: str) -> list[str]:
    """``a/b;c(d;e/f)`` is ``["a/b", "c/d", "c/e/f"]``."""
    paths: list[str] = []
    for part in split_top(fields, ";"):
        if "(" in part:
            head, _, rest = part.partition("(")
            if not rest.endswith(")"):
                raise ModelError(
                    ErrorItem(ErrorType.PROTOCOL, "invalid-value", f"unbalanced fields: {fields}")
                )
            paths += [f"{head}/{inner}" for inner in expand_fields(rest[:-1])]
        elif part:
            paths.append(part)
    return paths


def split_top(text: str, separator: str) -> list[str]:
    """Split at separators outside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == separator and not depth:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


class ChildLookup(Protocol):
    """The schema look-up the check needs (model.paths.PathResolver)."""

    def child(self, parent: SchemaNode | None, module: str, name: str) -> SchemaNode | None:
        """The child ``module:name`` of a node, or a top-level node when parent is None."""
        ...


def check_fields(fields: str, target: SchemaNode | None, lookup: ChildLookup) -> None:
    """Refuse a ``fields`` expression naming a node the target does not have (RFC 8040
    4.8.3: each path is a data node below the target; 400 ``invalid-value``)."""
    for path in expand_fields(fields):
        parent = target
        for step in path.split("/"):
            module, colon, name = step.rpartition(":")
            if not colon:
                module = parent.module if parent is not None else ""
            found = lookup.child(parent, module, name) if module and name else None
            if found is None or found.is_operation:
                raise ModelError(
                    ErrorItem(
                        ErrorType.PROTOCOL,
                        "invalid-value",
                        f"fields names {path!r}, which is no data node here",
                    )
                )
            parent = found
