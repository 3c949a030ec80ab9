"""A ``catsctl serve --plugin`` for the NETCONF error tests: a commit hook that refuses to undo.

Running may gain a bench entry named ``sticky`` but never lose it: once one was committed, a
transaction that deletes it, or that replaces the whole of running (whose diff does not list
what it removes), is refused. That makes a confirmed commit's rollback fail, so that
``cancel-commit`` must answer ``rollback-failed`` (RFC 6241 Appendix A) instead of pretending
it put running back.
"""

from __future__ import annotations

import json
import threading

from controller.datastore.api import Change, DatastoreName, Registrations
from controller.errors import CatsError, ErrorItem, ErrorType

STICKY = "sticky"


def _deletes_sticky(diff: object, *, deleting: bool = False) -> bool:
    """Whether a libyang JSON diff deletes a node whose value is ``sticky``."""
    if isinstance(diff, dict):
        meta = diff.get("@", {})
        deleting = deleting or (isinstance(meta, dict) and meta.get("yang:operation") == "delete")
        return any(_deletes_sticky(value, deleting=deleting) for value in diff.values())
    if isinstance(diff, list):
        return any(_deletes_sticky(value, deleting=deleting) for value in diff)
    return deleting and diff == STICKY


def register(registrations: Registrations) -> None:
    """Add the hook."""

    seen = threading.Event()

    def keep_sticky(change: Change) -> None:
        if change.datastore is not DatastoreName.RUNNING:
            return
        if seen.is_set() and (
            "/" in change.changed_paths or _deletes_sticky(json.loads(change.diff))
        ):
            raise CatsError(
                ErrorItem(ErrorType.APPLICATION, "operation-failed", "the sticky entry stays")
            )

        if STICKY in change.diff:
            seen.set()

    registrations.commit_hooks.append(keep_sticky)
