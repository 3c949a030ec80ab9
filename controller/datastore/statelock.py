"""The lock of a state directory: one server (or repair) at a time.

Two servers on one state directory would each append to the journal the other does not
replay, and acknowledged edits would be lost; so a server takes an exclusive ``flock`` on
``STATE_DIR/lock`` before it reads anything there, and writes its pid into the file. The
kernel drops the lock when the process ends, however it ends (SIGKILL too), so a stale lock
file never blocks a restart.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path
from types import TracebackType

from controller.datastore.errors import DatastoreError
from controller.errors import ErrorItem, ErrorType

LOCK_NAME = "lock"


class StateLockedError(DatastoreError):
    """Another process holds the state directory."""


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return "another process"
    return f"pid {text}" if text.isdigit() else "another process"


class StateLock:
    """An exclusive lock on a state directory, held until :meth:`release` (or exit)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, what: str = "serve") -> None:
        """Take the lock now or raise :class:`StateLockedError` naming the holder's pid."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            folder = self.path.parent
            raise StateLockedError(
                ErrorItem(
                    ErrorType.APPLICATION,
                    "lock-denied",
                    f"state directory {folder} is locked by {_holder(self.path)}; stop it or "
                    f"use another --state-dir (catsctl {what} needs it to itself)",
                )
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (the lock file stays: it is only a name to lock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> StateLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
