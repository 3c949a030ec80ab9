"""What the candidate and the whole-datastore operations use of the server core.

The core (``core.py``) composes the candidate (``candidate.py``) and the whole-datastore
operations (``operations.py``) and hands itself to them through these protocols, so neither
imports ``core.py``, not even for type checking: the core satisfies both structurally.
Everything named here runs under the core's read lock, but for the edits: those take the
locks they need themselves.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from controller.datastore.access import Guard
from controller.datastore.api import DatastoreName, Edit, Principal, Revision
from controller.datastore.stores import ConfigStore
from controller.datastore.transaction import Txn


class Editor(Protocol):
    """The core's transaction entry point (RFC 6241 7.2, RFC 8040 4.4-4.6)."""

    def edit(
        self,
        datastore: DatastoreName,
        edits: Sequence[Edit],
        principal: Principal,
        *,
        session: str | None = None,
        test_only: bool = False,
    ) -> Revision:
        """Apply edits as one all-or-nothing transaction, after the session lock check."""
        ...

    def copy_in(
        self,
        datastore: DatastoreName,
        edits: Sequence[Edit],
        principal: Principal,
        *,
        session: str | None = None,
    ) -> Revision:
        """As :meth:`edit`, for edits that copy a datastore in (no bound on their size)."""
        ...


class CandidateHost(Editor, Protocol):
    """What the candidate (RFC 6241 8.3) needs: running to copy and commit to, the access check."""

    @property
    def running(self) -> ConfigStore:
        """The running datastore's store."""
        ...

    @property
    def read_lock(self) -> threading.RLock:
        """The lock every use of the trees takes."""
        ...

    def guard(self, principal: Principal) -> Guard:
        """The access guard of the principal's edits (RFC 8341 3.4.5)."""
        ...


class OperationsHost(Editor, Protocol):
    """What the whole-datastore operations (RFC 6241 7.3, 8.4, 8.6) need of the core."""

    def store(self, datastore: DatastoreName) -> ConfigStore:
        """The configuration store a datastore name reads (candidate: its copy or running)."""
        ...

    def transaction(self, txn: Txn) -> Revision:
        """Run one transaction past the session locks (the server's own action)."""
        ...

    def put_back(self, txn: Txn) -> Revision:
        """As :meth:`transaction`, taking the locks itself (a large one works on a copy)."""
        ...

    def consistent(self, datastore: DatastoreName) -> None:
        """In a cluster, bring ``datastore`` up to the cluster's before a client reads or
        writes it."""
        ...
