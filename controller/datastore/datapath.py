"""Data paths in libyang's form (``/mod:node/list[key='v']/leaf``), split without libyang.

Revisions and units are keyed by these strings; :func:`steps` (controller.model.datapath, the
one tokenizer every layer uses) cuts them, and :func:`steps` and :func:`is_within` take a schema
path (:data:`~controller.types.SchemaPath`, no predicates) as well.
"""

from __future__ import annotations

from controller.model.datapath import steps
from controller.types import DataPath, SchemaPath

__all__ = ["ROOT", "ancestors", "is_within", "join", "parent", "schema_path", "steps"]

ROOT = DataPath("/")


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
