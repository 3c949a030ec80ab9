"""The collector of a long-lived server's heap: what start-up built is frozen, young objects
are collected less often (docs/notes/agent-selection-latency.md, "The collector").

CPython's cyclic collector walks every tracked container of the generations it collects.
A C-PS holds a large, long-lived heap (the schema, the datastore trees, the sessions and
their decision records), and a decision allocates thousands of short-lived containers: with
the default thresholds (700, 10, 10) a decision triggers dozens of young collections and,
now and then, a full one over the whole heap, which is the tail of the decision latency.
:func:`settle` is the standard remedy of long-lived Python servers: collect once, then
``gc.freeze()`` moves everything start-up built to the permanent generation (never walked
again), and a higher young threshold makes a collection rarer while each stays short (young
objects only). Reference counting frees acyclic garbage at once as before; only cycles
wait longer, and the oldest generation is still collected (CPython's rule: when it has
grown by a quarter since the last full collection).
"""

from __future__ import annotations

import gc
import logging

LOG = logging.getLogger("catsctl.heap")

YOUNG_THRESHOLD = 10_000
"""Allocations net of deallocations between two collections of the youngest generation."""


def settle(young: int = YOUNG_THRESHOLD) -> None:
    """After start-up: collect, freeze what survives, and raise the young threshold."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, old)
    LOG.info(
        "start-up heap frozen: %d objects; collector thresholds %s",
        gc.get_freeze_count(),
        gc.get_threshold(),
    )


class Settled:
    """The last part of a server's application (:class:`controller.server.Hosted`): once
    every other part started (the datastore loaded), it settles the heap."""

    def start(self) -> None:
        """Settle the heap."""
        settle()

    def close(self) -> None:
        """Nothing to stop."""
