"""Small documents the server keeps for itself in the state directory (``NAME.kept``).

The confirmed commit in progress (RFC 6241 8.4: its backup of running, its owner, persist-id
and deadline) is one: it must outlive a restart, as netopeer2 keeps it. Each document is
written atomically in the snapshot format (:mod:`.snapshot`, checksummed), so a reader finds
the old document, the new one or none, and a damaged one stops the start instead of being
half read.
"""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, datetime
from pathlib import Path

from controller.datastore import snapshot
from controller.datastore.damage import Damage, StateDamagedError
from controller.datastore.errors import refuse
from controller.datastore.files import REAL_DISK, Disk, fsync_dir, write_atomically

SUFFIX = ".kept"
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,63}$")


def kept_path(folder: Path, name: str) -> Path:
    """The file of a kept document."""
    if not _NAME.match(name):
        raise ValueError(f"not a name for a kept document: {name!r}")
    return folder / f"{name}{SUFFIX}"


class KeptDocuments:
    """The kept documents of one state directory (None: kept in memory only)."""

    def __init__(self, folder: Path | None, disk: Disk = REAL_DISK) -> None:
        self._folder = folder
        self._disk = disk
        self._memory: dict[str, str] = {}

    def keep(self, name: str, document: str | None) -> None:
        """Replace the document (None removes it); durable when this returns."""
        if self._folder is None:
            if document is None:
                self._memory.pop(name, None)
            else:
                self._memory[name] = document
            return
        path = kept_path(self._folder, name)
        try:
            if document is None:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    fsync_dir(self._folder)
                return
            data = snapshot.encode(document, 0, datetime.now(UTC).isoformat())
            write_atomically(path, data, self._disk)
        except OSError as exc:
            raise refuse("operation-failed", f"cannot keep {path.name}: {exc}") from exc

    def kept(self, name: str) -> str | None:
        """The document, or None when there is none.

        Raises:
            StateDamagedError: the file is damaged.
        """
        if self._folder is None:
            return self._memory.get(name)
        path = kept_path(self._folder, name)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        found = snapshot.decode(path, data)
        if not found.checked:
            raise StateDamagedError(Damage(path, 0, "no checksum"))
        return found.document
