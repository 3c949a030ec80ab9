"""Report sequence numbers that survive a restart (service-metrics-op 8, sci-implementation
7.3, cats-t:sequence-number), shared by the SCI, the C-SMA and the C-NMA.

The receiver refuses a report whose sequence number does not exceed the sender's last one, so
an agent never reuses a number: each number is written to ``STATE_DIR/sequence`` (write to a
temporary file, fsync, rename) before the report that carries it is sent. A new state
directory starts from the clock in milliseconds, so even an agent that lost its state resumes
above the numbers it used before, as long as it sent fewer than a thousand reports a second.
When the C-PS refuses a number anyway (a state directory restored from an old backup),
:meth:`SequenceStore.advance` moves the counter up to the clock.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

FILE_NAME = "sequence"


class SequenceStore:
    """The last sequence number used, persisted in a state directory."""

    def __init__(self, state_dir: Path, clock: Callable[[], float] = time.time) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self._path = state_dir / FILE_NAME
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self._last = int(self._path.read_text(encoding="ascii").strip())
        except FileNotFoundError:
            self._last = self._from_clock()
        except ValueError as exc:
            raise ValueError(f"{self._path} does not hold a sequence number") from exc

    @property
    def last(self) -> int:
        """The last number handed out (or the one before the first)."""
        return self._last

    def _from_clock(self) -> int:
        return int(self._clock() * 1000) - 1

    def advance(self) -> None:
        """Continue from the clock in milliseconds if that is above the last number."""
        with self._lock:
            self._last = max(self._last, self._from_clock())

    def next(self) -> int:
        """A number above every number handed out before, persisted before it is returned."""
        with self._lock:
            number = self._last + 1
            temporary = self._path.with_suffix(".tmp")
            with temporary.open("w", encoding="ascii") as sink:
                sink.write(f"{number}\n")
                sink.flush()
                os.fsync(sink.fileno())
            temporary.replace(self._path)
            self._last = number
            return number
