"""Fencing of a C-PS cluster's leaders at the forwarder (docs/cluster.md).

The leader of a cluster of C-PS replicas writes its term (the etcd revision of its election)
into ``cats-fencing:fencing/leader-term`` with every change it commits here. The forwarder keeps
the highest term it accepted (running holds it, so it survives a restart with the journal) and
refuses, from its commit hook, a commit that would set a lower one: a leader that was paused
past its lease and resumed cannot overwrite what its successor wrote. A C-PS that is not in a
cluster writes no term, and nothing is checked.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from controller.datastore.api import SYSTEM, Change, DatastoreName, ReadRequest
from controller.datastore.core import Core
from controller.errors import CatsError, ErrorItem, ErrorType
from controller.types import DataPath

LOG = logging.getLogger("agents.forwarder")
YANG_DIR = Path(__file__).resolve().parent / "yang"
MODULE = "cats-fencing"
ROOT = DataPath(f"/{MODULE}:fencing")
STALE_TERM = "stale-leader-term"  # error-app-tag of a refused commit


class Fence:
    """The highest leader term accepted, checked on every commit that sets one."""

    def __init__(self, core: Callable[[], Core], clock: Callable[[], float] = time.time):
        self._core = core
        self._clock = clock
        self._lock = threading.Lock()
        self.highest = 0
        self.accepted_at = 0.0  # when the highest term was first accepted (wall clock)
        self.refused = 0

    def load(self) -> None:
        """The term running holds (at start)."""
        self.highest = self._term() or 0

    def _term(self) -> int | None:
        result = self._core().read(ReadRequest(DatastoreName.RUNNING, ROOT), SYSTEM)
        if result.document is None:
            return None
        term = json.loads(result.document).get(f"{MODULE}:fencing", {}).get("leader-term")
        return None if term is None else int(term)

    def on_commit(self, change: Change) -> None:
        """Commit hook: refuse a lower term than the highest accepted (the commit is undone)."""
        if not any(str(path).startswith(ROOT) for path in change.changed_paths):
            return
        term = self._term()
        with self._lock:
            if term is None or term >= self.highest:
                if term is not None and term > self.highest:
                    self.highest, self.accepted_at = term, self._clock()
                    LOG.info("fencing: leader term %d accepted", term)
                return
            self.refused += 1
            highest = self.highest
        LOG.warning("fencing: refused a commit of leader term %d (highest %d)", term, highest)
        raise CatsError(
            ErrorItem(
                ErrorType.APPLICATION,
                "operation-failed",
                f"leader term {term} is lower than term {highest} this forwarder accepted: "
                "the C-PS that sent it is no longer the cluster's leader",
                str(ROOT) + "/leader-term",
                STALE_TERM,
            )
        )

    def state(self) -> dict[str, object]:
        """For the forwarder's log and tests: the highest term, when, refusals."""
        return {"highest": self.highest, "accepted-at": self.accepted_at, "refused": self.refused}
