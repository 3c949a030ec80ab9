"""Data paths in libyang's form (``/mod:node/list[key='v']/leaf``), split without libyang.

Revisions and units are keyed by these strings, so they are cut into steps here: a ``/`` inside
a quoted predicate value does not separate steps. :func:`steps` and :func:`is_within` take a
schema path (:data:`~controller.types.SchemaPath`, no predicates) as well.
"""

from __future__ import annotations

from controller.types import DataPath, SchemaPath

ROOT = DataPath("/")


def steps(path: str) -> list[str]:
    """The steps of an absolute data path (``[]`` for the root)."""
    result: list[str] = []
    current: list[str] = []
    quote: str | None = None
    depth = 0
    for char in path:
        if quote is not None:
            current.append(char)
            if char == quote:
                quote = None
            continue
        if char in "'\"" and depth:
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "/" and not depth:
            if current:
                result.append("".join(current))
            current = []
            continue
        current.append(char)
    if current:
        result.append("".join(current))
    return result


def join(parts: list[str]) -> DataPath:
    """The absolute data path of some steps of a data path (the root for none)."""
    return DataPath(_joined(parts))


def _joined(parts: list[str]) -> str:
    return "/" + "/".join(parts) if parts else ROOT


def ancestors(path: DataPath) -> list[DataPath]:
    """The proper ancestors of a path, nearest first, ending with the root ``/``."""
    parts = steps(path)
    return [join(parts[:index]) for index in range(len(parts) - 1, -1, -1)]


def parent(path: DataPath) -> DataPath:
    """The parent path (the root for a top-level node)."""
    return join(steps(path)[:-1])


def is_within(path: str, ancestor: str) -> bool:
    """Whether ``path`` is ``ancestor`` or below it."""
    if ancestor in (ROOT, path):
        return True
    return path.startswith(ancestor) and path[len(ancestor)] in "/"


def schema_path(path: DataPath) -> SchemaPath:
    """The path without predicates: ``/m:c/list[k='1']/x`` is ``/m:c/list/x``."""
    return SchemaPath(_joined([step.split("[", 1)[0] for step in steps(path)]))
