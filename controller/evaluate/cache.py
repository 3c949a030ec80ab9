"""The prefix KV cache of a serving instance, and delayed views of it.

An instance keeps the KV blocks of the prompts it prefilled in an LRU of ``capacity`` blocks.
A new request reuses the longest cached prefix of its blocks (as vLLM's and SGLang's prefix
caches do); the blocks of a request are inserted last block first, so a prefix outlives its
tail. Every insertion and eviction is logged with its time, so that a view as of an earlier
time (what a C-SMA reported, what a router's KV events told it) can be replayed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence


class CacheLog:
    """Insertions (True) and evictions (False) of blocks, in time order."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[tuple[float, int, bool]] = []


class PrefixCache:
    """An LRU of KV-cache blocks keyed by block hash."""

    __slots__ = ("blocks", "capacity", "log")

    def __init__(self, capacity: int, log: CacheLog | None = None) -> None:
        self.capacity = capacity
        self.blocks: OrderedDict[int, None] = OrderedDict()
        self.log = log

    def prefix(self, blocks: Sequence[int]) -> int:
        """How many leading blocks of ``blocks`` are cached."""
        held = self.blocks
        count = 0
        for block in blocks:
            if block not in held:
                break
            count += 1
        return count

    def touch(self, blocks: Iterable[int]) -> None:
        """Mark cached blocks as used now (they were reused by a prefill)."""
        move = self.blocks.move_to_end
        for block in reversed(list(blocks)):
            move(block)

    def insert(self, blocks: Sequence[int], now: float) -> None:
        """Cache the blocks of a prefilled prompt, evicting the least recently used."""
        held = self.blocks
        log = self.log.events if self.log is not None else None
        for block in reversed(blocks):
            if block in held:
                held.move_to_end(block)
                continue
            held[block] = None
            if log is not None:
                log.append((now, block, True))
        while len(held) > self.capacity:
            evicted, _ = held.popitem(last=False)
            if log is not None:
                log.append((now, evicted, False))


class CacheMirror:
    """The blocks of one instance's cache as of a time, advanced in time order.

    ``version`` changes whenever the mirrored set changes, so a consumer can rebuild what it
    derives from the set only then.
    """

    __slots__ = ("as_of", "blocks", "cursor", "frozen", "log", "version")

    def __init__(self, log: CacheLog) -> None:
        self.log = log
        self.blocks: set[int] = set()
        self.frozen: tuple[int, frozenset[int]] | None = None  # a snapshot and its version
        self.cursor = 0
        self.version = 0
        self.as_of = float("-inf")

    def advance(self, until: float) -> None:
        """Apply every logged change up to and including ``until``."""
        if until <= self.as_of:
            return
        self.as_of = until
        events = self.log.events
        cursor = self.cursor
        end = len(events)
        if cursor >= end or events[cursor][0] > until:
            return
        blocks = self.blocks
        while cursor < end and events[cursor][0] <= until:
            _, block, added = events[cursor]
            if added:
                blocks.add(block)
            else:
                blocks.discard(block)
            cursor += 1
        self.cursor = cursor
        self.version += 1

    def prefix(self, blocks: Sequence[int]) -> int:
        """How many leading blocks of ``blocks`` the mirrored cache holds."""
        held = self.blocks
        count = 0
        for block in blocks:
            if block not in held:
                break
            count += 1
        return count
