"""heap.settle: what start-up built is frozen, the young generation collected less often."""

from __future__ import annotations

import gc
import weakref

from controller import heap


class _Node:
    other: object = None


def test_settle_freezes_the_start_up_heap_and_raises_the_young_threshold() -> None:
    before = gc.get_threshold()
    try:
        kept = [[index] for index in range(1_000)]  # survivors of a start-up
        heap.settle()
        assert gc.get_freeze_count() >= len(kept)
        assert gc.get_threshold() == (heap.YOUNG_THRESHOLD, before[1], before[2])
        cycle = _Node()
        cycle.other = cycle
        gone = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert gone() is None  # cycles made after start-up are still collected
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
