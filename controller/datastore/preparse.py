"""Start-up: parse running's LYB snapshot while the rest of the server is imported.

``catsctl serve`` spends about as long importing its modules (0.4 s) as libyang spends
parsing a 100k-entry LYB snapshot (0.4-0.6 s), and libyang's parse runs without the GIL. So
the command compiles the schema first, starts :class:`Preparse` on a thread, and imports the
server meanwhile. The core then asks :meth:`Preparse.take` for the tree of the snapshot it
read itself: it gets the parsed tree only when the bytes are the very bytes it read and
checked (header, checksum, schema fingerprint), else None and it parses as before. Nothing is
decided here: a damaged, foreign or JSON snapshot is parsed (and refused) by the core's own
path, with its own errors.

The thread only reads the file and calls libyang on its own tree; the state directory is not
locked yet, so it writes nothing. :meth:`take` waits for it, so no other thread uses the
context while it parses.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Self

from controller.datastore import snapshot
from controller.datastore.api import DatastoreName
from controller.errors import CatsError
from controller.model import nodes
from controller.model.schema import Schema

LOG = logging.getLogger(__name__)


class Preparse:
    """A LYB snapshot parsed on a thread of its own, for the core to take."""

    def __init__(self, schema: Schema, state_dir: Path) -> None:
        self.schema = schema  # the server's, which the core then uses
        self._ctx = schema.context.cdata
        self._path = snapshot.path_in(state_dir, DatastoreName.RUNNING.value)
        self._body: bytes | memoryview | None = None
        self._tree: Any = None
        self._thread = threading.Thread(target=self._run, name="snapshot-parse", daemon=True)

    def start(self) -> Self:
        """Start parsing (a missing or unreadable file leaves nothing to take)."""
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            data = self._path.read_bytes()
            found = snapshot.decode(self._path, data)
            if found.format != snapshot.LYB or not found.body:
                return
            self._tree = nodes.parse_lyb(self._ctx, found.body)
            self._body = found.body
        except (OSError, CatsError) as exc:  # the core reads it again and says what is wrong
            LOG.debug("snapshot %s not parsed ahead: %s", self._path, exc)

    def take(self, found: snapshot.Snapshot) -> Any:
        """The parsed tree of ``found`` (the snapshot the core read), or None.

        The tree is the caller's from then on; a tree of other bytes is freed.
        """
        self.wait()
        tree, body = self._tree, self._body
        self._tree = self._body = None
        if tree is None:
            return None
        if body is not None and memoryview(body) == memoryview(found.body):  # no copies
            return tree
        nodes.free_all(tree)
        return None

    def wait(self) -> None:
        """Until the parse has ended (before anything else uses the context)."""
        if self._thread.is_alive() or self._thread.ident is not None:
            self._thread.join()

    def close(self) -> None:
        """Free a tree nobody took."""
        self.wait()
        if self._tree is not None:
            nodes.free_all(self._tree)
            self._tree = self._body = None
