"""The background thread that keeps the C-PS soft state moving (service-metrics-op 8).

It calls a sweep function every ``period`` seconds: throttled reports due, dampened prices due,
CST entries past their Expiry Time, NST entries past their lifetime, and the write-behind of
the report-sender ledger. The work is in the sweep function; this is only the clock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

LOG = logging.getLogger("catsctl.cps")

DEFAULT_PERIOD = 0.2


class Sweeper:
    """A daemon thread calling ``sweep`` periodically until :meth:`stop`."""

    def __init__(self, sweep: Callable[[], None], period: float = DEFAULT_PERIOD) -> None:
        self._sweep = sweep
        self._period = period
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="cps-sweeper", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for its current sweep to finish."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stopping.wait(self._period):
            try:
                self._sweep()
            except Exception:  # a failing sweep must not end aging for good
                LOG.exception("the C-PS sweep failed")
