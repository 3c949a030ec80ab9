"""Entity-tags and last-modified times per resource (RFC 8040 3.4.1.1, 3.4.1.2).

A change to a node changes the revision of that node, of all its ancestors and of the whole
datastore; a created, replaced or deleted node also changes everything under it. Unchanged
siblings keep theirs. Two dicts keyed by data path hold this at O(depth) per changed node:
``_node`` (something at or under this path changed) and ``_subtree`` (everything under this
path changed). A path's revision is the newest of its own ``_node`` mark and the ``_subtree``
marks of itself and its ancestors, or the datastore's base revision.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import UTC, datetime

from controller.datastore import datapath
from controller.datastore.api import Revision
from controller.types import DataPath

Mark = tuple[int, datetime]


_KNOWN_MAX = 4096


class Revisions:
    """The revision marks of one datastore."""

    def __init__(self, base_time: datetime | None = None) -> None:
        # A new token per process: entity-tags never collide across restarts.
        self._token = secrets.token_hex(4)
        self._serial = 0
        self._base: Mark = (0, base_time or datetime.now(UTC))
        self._node: dict[DataPath, Mark] = {}
        self._subtree: dict[DataPath, Mark] = {}
        self._known: dict[DataPath, Revision] = {}  # of(path) since the last change (reads repeat)
        self._pending: Mark | None = None

    def _revision(self, mark: Mark) -> Revision:
        return Revision(f"{self._token}-{mark[0]}", mark[1].replace(microsecond=0))

    def datastore(self) -> Revision:
        """The revision of the whole datastore."""
        return self._revision(max((self._base, self._node.get(datapath.ROOT, self._base))))

    def of(self, path: DataPath | None) -> Revision:
        """The revision of the resource at a data path (None: the datastore)."""
        if path is None or path == datapath.ROOT:
            return self.datastore()
        known = self._known.get(path)
        if known is not None:
            return known
        marks = [self._base, self._node.get(path, self._base), self._subtree.get(path, self._base)]
        marks += [self._subtree.get(above, self._base) for above in datapath.ancestors(path)]
        if len(self._known) >= _KNOWN_MAX:  # reads of many distinct paths: start again
            self._known.clear()
        found = self._known[path] = self._revision(max(marks))
        return found

    def prepare(self) -> Revision:
        """The revision the next :meth:`record` will give (what commit hooks are told)."""
        self._pending = (self._serial + 1, datetime.now(UTC))
        return self._revision(self._pending)

    def record(self, changed: Iterable[DataPath], whole: Iterable[DataPath]) -> Revision:
        """Mark a committed transaction: ``changed`` nodes and ``whole`` subtrees."""
        mark: Mark = self._pending or (self._serial + 1, datetime.now(UTC))
        self._pending = None
        self._serial = mark[0]
        self._known.clear()
        for path in whole:
            self._subtree[path] = mark
            self._node[path] = mark
        for path in changed:
            self._node[path] = mark
            for above in datapath.ancestors(path):
                self._node[above] = mark
        for path in whole:
            for above in datapath.ancestors(path):
                self._node[above] = mark
        self._node[datapath.ROOT] = mark
        return self._revision(mark)

    def reset(self) -> Revision:
        """Everything changed (a whole-datastore replace or a reload)."""
        self._node.clear()
        self._subtree.clear()
        self._known.clear()
        self._serial += 1
        self._base = (self._serial, datetime.now(UTC))
        return self._revision(self._base)
