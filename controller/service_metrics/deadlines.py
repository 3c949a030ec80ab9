"""Table keys by deadline, so the sweeper finds the due ones without scanning the tables (8).

Keys sit in one bucket per second of their deadline; a heap orders the buckets. Moving a key
whose deadline stays within the same second (reports in quick succession) costs two integer
conversions; a sweep touches only the buckets that have come due. Deadlines need not be in
the order of the reports, so a change of the heartbeat interval or of the expiry multiplier
is harmless.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from controller.selection.units import Timestamp

K = TypeVar("K", bound=Hashable)


class Deadlines(Generic[K]):
    """A set of keys, each with a deadline (seconds since the epoch)."""

    def __init__(self) -> None:
        self._buckets: dict[int, set[K]] = {}
        self._seconds: list[int] = []  # heap of the bucket seconds

    def move(self, key: K, old: Timestamp | None, new: Timestamp | None) -> None:
        """Change the deadline of ``key`` from ``old`` (None: not held) to ``new`` (None:
        drop it)."""
        before = None if old is None else int(old)
        after = None if new is None else int(new)
        if before == after:
            return
        if before is not None:
            bucket = self._buckets.get(before)
            if bucket is not None:
                bucket.discard(key)
        if after is not None:
            bucket = self._buckets.get(after)
            if bucket is None:
                self._buckets[after] = bucket = set()
                heapq.heappush(self._seconds, after)
            bucket.add(key)

    def due(self, now: Timestamp, deadline: Callable[[K], Timestamp | None]) -> list[K]:
        """Take out and return the keys whose ``deadline(key)`` has come (None: gone)."""
        found: list[K] = []
        kept: list[int] = []
        while self._seconds and self._seconds[0] <= now:
            second = heapq.heappop(self._seconds)
            bucket = self._buckets.pop(second)
            later = set()
            for key in bucket:
                moment = deadline(key)
                if moment is not None and moment > now:
                    later.add(key)  # due later within this second
                elif moment is not None:
                    found.append(key)
            if later:
                self._buckets[second] = later
                kept.append(second)
        for second in kept:
            heapq.heappush(self._seconds, second)
        return found

    def clear(self) -> None:
        """Forget every key."""
        self._buckets.clear()
        self._seconds.clear()
