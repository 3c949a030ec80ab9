"""Report sequence numbers that keep increasing across restarts (sci-implementation 7.3).

The last number used is written to ``STATE_DIR/sequence-number`` (atomically, before the
report leaves), so a restarted SCI resumes above it. Without a readable file the SCI starts
from the current Unix time in microseconds, which is above any number an earlier run used
unless it sent more than a million reports a second.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

FILE = "sequence-number"


class SequenceNumbers:
    """The persisted counter of one SCI."""

    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self._path = state_dir / FILE
        self._lock = threading.Lock()
        self._last = self._load()

    def _load(self) -> int:
        try:
            return int(self._path.read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            return time.time_ns() // 1000

    @property
    def last(self) -> int:
        """The last number handed out (or resumed from)."""
        return self._last

    def next(self) -> int:
        """The next number, persisted before it is returned."""
        with self._lock:
            self._last += 1
            temporary = self._path.with_suffix(".tmp")
            temporary.write_text(str(self._last), encoding="ascii")
            os.replace(temporary, self._path)
            return self._last
