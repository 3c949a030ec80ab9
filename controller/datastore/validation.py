"""How a transaction on running is validated: the seam between full and entry-local checks.

:class:`FullValidation` runs ``lyd_validate_all`` on the whole tree: correct for any schema and
O(datastore). :class:`~controller.datastore.local.LocalValidation` checks only what an edit can
affect and falls back to this one for whatever it cannot prove (docs/notes/validation-cost.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from controller.datastore.errors import DatastoreError
from controller.datastore.stores import ConfigStore
from controller.datastore.transaction import Applied
from controller.errors import CatsError
from controller.model import nodes


@dataclass(frozen=True, slots=True)
class ValidationStats:
    """How many transactions each path validated (a full fallback is correct but slow)."""

    local: int = 0
    full: int = 0


class IndexesNeededError(Exception):
    """A transaction needs the indexes :meth:`Validator.rebuild` left to build, and they can
    only be built on the tree as committed: the caller undoes the transaction, calls
    :meth:`Validator.ready` and runs it again."""


class Validator(Protocol):
    """Validates a transaction already applied in place, before it is made current."""

    def check(self, store: ConfigStore, applied: Sequence[Applied]) -> None:
        """Raise :class:`DatastoreError` if the tree after ``applied`` is invalid, or
        :class:`IndexesNeededError` (before it changed anything)."""
        ...

    def settle(self, *, committed: bool) -> None:
        """The transaction was committed or rolled back: keep or drop pending index changes."""
        ...

    def ready(self) -> None:
        """Build what :meth:`rebuild` left to build (on the tree as committed)."""
        ...

    def rebuild(self, store: ConfigStore) -> None:
        """Recompute whatever is derived from the tree (after a load or a whole replace)."""
        ...

    def stats(self) -> ValidationStats:
        """Counts so far."""
        ...

    def prepared(self, store: ConfigStore) -> object:
        """What :meth:`rebuild` would derive from ``store``, not installed yet (for a tree
        that is about to become running's: made outside the core's read lock)."""
        ...

    def install(self, prepared: object) -> None:
        """Put what :meth:`prepared` made in place."""
        ...


def validate_full(store: ConfigStore) -> None:
    """``lyd_validate_all`` of the whole tree, errors as :class:`DatastoreError`."""
    store.tree.before_validation()
    try:
        nodes.validate_all(store.ctx, store.first)
    except CatsError as exc:
        raise DatastoreError(*exc.items) from exc
    finally:
        store.tree.invalidate()  # libyang may have added defaults or dropped cases


class FullValidation:
    """Whole-tree validation of every transaction."""

    def __init__(self) -> None:
        self._full = 0

    def check(self, store: ConfigStore, applied: Sequence[Applied]) -> None:
        """Validate the whole tree."""
        del applied
        self._full += 1
        validate_full(store)

    def settle(self, *, committed: bool) -> None:
        """Nothing is derived from the tree."""
        del committed

    def rebuild(self, store: ConfigStore) -> None:
        """Nothing is derived from the tree."""
        del store

    def ready(self) -> None:
        """Nothing is derived from the tree."""

    def stats(self) -> ValidationStats:
        """Every transaction was a full validation."""
        return ValidationStats(0, self._full)

    def prepared(self, store: ConfigStore) -> object:
        """Nothing is derived from the tree."""
        del store
        return None

    def install(self, prepared: object) -> None:
        """Nothing is derived from the tree."""
        del prepared
