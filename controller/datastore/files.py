"""Durable file writes of the state directory, through one seam (:class:`Disk`).

Every byte the server core persists goes through a :class:`Disk`: the journal's appends and
the atomic replacement of a snapshot (or any other state file). The real one writes, flushes
and fsyncs; a test puts a disk that fills up in its place (ENOSPC after a budget of bytes),
which no user can do, to check that a failed write never leaves a commit half made nor a
temporary file behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import IO, Protocol

TEMP_SUFFIX = ".tmp"


class Disk(Protocol):
    """Writes to open files; raises OSError (ENOSPC, EIO) possibly after a part was written."""

    def write(self, handle: IO[bytes], data: bytes) -> None:
        """Write all of ``data`` at the handle's position and flush it to the kernel."""
        ...

    def sync(self, handle: IO[bytes]) -> None:
        """Make what was written durable (fsync)."""
        ...


class RealDisk:
    """The file system as it is."""

    def write(self, handle: IO[bytes], data: bytes) -> None:
        """Write all of it (an unbuffered handle may take a part per call) and flush."""
        view = memoryview(data)
        while view:
            written = handle.write(view)
            if not written:
                raise OSError(errno.EIO, "the file took no bytes")
            view = view[written:]
        handle.flush()

    def sync(self, handle: IO[bytes]) -> None:
        """fsync."""
        os.fsync(handle.fileno())


REAL_DISK = RealDisk()


def fsync_dir(folder: Path) -> None:
    """Make a rename in a folder durable."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def temp_path(path: Path) -> Path:
    """Where :func:`write_atomically` stages the new content of ``path``."""
    return path.with_name(path.name + TEMP_SUFFIX)


def write_atomically(path: Path, data: bytes, disk: Disk = REAL_DISK) -> None:
    """Replace ``path`` with ``data``: temp file, fsync, rename, fsync the folder.

    A reader finds the old content or the new one, never a mix. When any step fails the
    temporary file is removed (a full disk stays no fuller than it was) and the error raised.
    """
    temp = temp_path(path)
    try:
        with temp.open("wb") as handle:
            disk.write(handle, data)
            disk.sync(handle)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    fsync_dir(path.parent)
