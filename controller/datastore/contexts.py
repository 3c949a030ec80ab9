"""Twin libyang contexts, so that operations parse and validate in parallel.

libyang interns every string of a parsed tree in its context's dictionary, behind one lock: two
threads parsing reports against the same context run at about 1.2 times the speed of one, two
threads on two contexts at about 2 times (``python -m tools.bench.selection``). The core lends a
twin (:meth:`controller.model.Schema.twin`, the same modules and features) to the work that
needs no datastore tree: parsing and validating the input and output of an RPC whose
validation cannot read running (:func:`controller.datastore.rpc.reads_running`), and
application notifications of the same kind. Everything else, and every borrower while all
twins are lent, uses the core's own context, as before.

A tree parsed in a twin is printed and freed there; nothing of it outlives the loan.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from controller.model.schema import Schema


def default_size() -> int:
    """One twin per CPU: as many parses in parallel as there are cores to run them."""
    return os.cpu_count() or 1


class Contexts:
    """A fixed number of twin contexts of one schema, lent one borrower at a time.

    A twin is compiled when a borrower first finds none free (about 70 ms of CPU each), not
    at start-up: a server that never runs two operations at once never compiles one.
    """

    def __init__(self, schema: Schema, size: int) -> None:
        self._schema = schema
        self._main: Any = schema.context.cdata
        self._size = size
        self._twins: list[Schema] = []
        self._grow = threading.Lock()
        # list.append and list.pop are atomic: lending needs no lock of its own.
        self._free: list[Any] = []

    def _compile(self) -> Any:
        """A new twin, or None when there are ``size`` already."""
        with self._grow:
            if len(self._twins) >= self._size:
                return None
            twin = self._schema.twin()
            self._twins.append(twin)
            return twin.context.cdata

    @contextmanager
    def borrow(self) -> Iterator[Any]:
        """A ``struct ly_ctx *`` no other thread uses meanwhile, or the core's own context
        when every twin is lent."""
        try:
            ctx = self._free.pop()
        except IndexError:
            ctx = self._compile()
        if ctx is None:
            yield self._main
            return
        try:
            yield ctx
        finally:
            self._free.append(ctx)

    @property
    def size(self) -> int:
        """How many twins there may be (0: everything uses the core's context)."""
        return self._size

    def close(self) -> None:
        """Free the twins (no borrower may hold one)."""
        with self._grow:
            for twin in self._twins:
                twin.close()
            self._twins = []
            self._free = []
            self._size = 0
