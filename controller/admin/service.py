"""The RPCs and state of cats-controller-admin: rollback, compare, commit, history and audit.

Every operation goes through the server core as the requesting principal: a rollback is one
transaction of the reverse edits of the commits after its target (validated, access-checked,
locked like any edit, and itself a commit), a comparison shows only what the principal may read
(:mod:`controller.datastore.review`), and a commit is the core's (RFC 6241 8.3.4.1) with the
request context carrying its comment and label into the history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from controller.admin import render
from controller.audit import AuditStore, HistoryStore, annotated, current
from controller.datastore.api import DatastoreName, Edit, Principal, Registrations
from controller.datastore.compare import ChangeItem
from controller.datastore.core import Core
from controller.datastore.errors import refuse
from controller.datastore.history import NO_REVERSE, decode
from controller.datastore.stores import ConfigStore
from controller.types import DataPath, Json, SchemaPath

MODULE = render.MODULE
#: The audit records the ``audit`` state shows (the newest; ``catsctl audit`` reads them).
AUDIT_SHOWN = 500
#: The data the server treats as default-deny-all (RFC 8341 3.5.1.2): the audit records.
AUDIT = SchemaPath(f"/{MODULE}:audit")
_DATASTORES = {
    name.value: name
    for name in (DatastoreName.RUNNING, DatastoreName.CANDIDATE, DatastoreName.STARTUP)
}


@dataclass(frozen=True, slots=True)
class ConfirmRequest:
    """A confirmed or confirming commit of ``cc:commit`` (RFC 6241 8.4)."""

    timeout: int | None
    persist: str | None
    persist_id: str | None


#: Runs a confirmed or confirming commit (NETCONF's confirmed-commit state): principal,
#: session (None over RESTCONF) and the request.
ConfirmedCommit = Callable[[Principal, str | None, ConfirmRequest], None]


def _text(members: Json, name: str) -> str | None:
    value = members.get(name)
    return None if value is None else str(value)


class Admin:
    """cats-controller-admin served over a core (``core`` is asked for it when first needed:
    the core is built after the applications register)."""

    def __init__(
        self,
        core: Callable[[], Core],
        history: HistoryStore | None,
        audit: AuditStore | None,
        *,
        kept: int,
        confirmed: Callable[[], ConfirmedCommit | None] = lambda: None,
    ) -> None:
        self._core = core
        self._history = history
        self._audit = audit
        self._kept = kept
        self._confirmed = confirmed

    # ------------------------------------------------------------------ history

    def _history_store(self) -> HistoryStore:
        if self._history is None:
            raise refuse(
                "operation-not-supported",
                "the commit history is off; start the server with --history-size N (N > 0)",
            )
        return self._history

    def _target(self, members: Json) -> int:
        """The commit a rollback returns to."""
        history = self._history_store()
        current_id = self._core().running.txid
        if "commit-id" in members:
            target = int(str(members["commit-id"]))
        elif "label" in members:
            entry = history.labelled(str(members["label"]))
            if entry is None:
                raise refuse("invalid-value", f"no kept commit is labelled {members['label']!r}")
            target = entry.id
        else:
            target = current_id - int(str(members.get("back", 1)))
        if target > current_id:
            raise refuse("invalid-value", f"commit {target} does not exist (now {current_id})")
        if target < 1 or history.entry(target) is None:
            self._refuse_past_snapshot(target, history.reverse_after(target))
            raise refuse(
                "invalid-value",
                f"commit {target} is not kept: a rollback returns to a kept commit (see "
                "catsctl config history; a larger --history-size keeps more)",
            )
        return target

    def reverse_edits(self, target: int) -> list[Edit]:
        """The edits that take running back to right after commit ``target``."""
        history = self._history_store()
        current_id = self._core().running.txid
        kept = history.reverse_after(target) if current_id - target <= self._kept else []
        self._refuse_past_snapshot(target, kept)
        if [commit_id for commit_id, _ in kept] != list(range(current_id, target, -1)):
            raise refuse(
                "invalid-value",
                f"commit {target} is older than the kept history ({self._kept} commits); "
                "a larger --history-size keeps more",
            )
        return [edit for _, document in kept for edit in decode(document)]

    @staticmethod
    def _refuse_past_snapshot(target: int, kept: list[tuple[int, str]]) -> None:
        """Refuse to go back to ``target`` across the cluster's snapshot this replica loaded
        (joined, or came back after the log was trimmed): it has no reverse edits for it."""
        loaded = [commit_id for commit_id, document in kept if document == NO_REVERSE]
        if loaded:
            raise refuse(
                "invalid-value",
                f"commit {target} is before commit {max(loaded)}, the cluster's snapshot this "
                "replica loaded (it joined, or came back after the cluster's log was trimmed): "
                "it has no history before it; roll back on a replica that applied those "
                "commits, or to a commit after it (docs/cluster.md)",
            )

    def rollback(self, principal: Principal, members: Json) -> Json:
        """``cc:rollback``: one transaction back to a past commit, or its dry run."""
        self._core().consistent(DatastoreName.RUNNING)  # a cluster's last commit applied here
        target = self._target(members)
        edits = self.reverse_edits(target)
        core = self._core()
        dry_run = "dry-run" in members
        # A dry run is validated and access-checked here; a rollback is by its own edit (its
        # compare, answered only once the edit succeeded, need not check twice)
        items = core.trial(edits, principal, validate=dry_run)
        result = render.compare_result(items, "running", str(target))
        if dry_run or not items:
            return result
        comment = _text(members, "comment") or f"rollback to commit {target}"
        with annotated(operation="rollback", comment=comment, label=None):
            core.edit(DatastoreName.RUNNING, edits, principal, session=current().session)
        return {"commit-id": str(core.running.txid), **result}

    # ------------------------------------------------------------------ compare

    def compare(self, principal: Principal, members: Json) -> Json:
        """``cc:compare``: the changes from ``source`` to ``target``."""
        self._core().consistent(DatastoreName.RUNNING)  # a cluster's last commit applied here
        source, target = str(members["source"]), str(members.get("target", "running"))
        return render.compare_result(self.changes(principal, source, target), source, target)

    def changes(self, principal: Principal, source: str, target: str) -> list[ChangeItem]:
        """The changes that turn configuration ``source`` into ``target``."""
        if source == target:
            return []
        core = self._core()
        running = DatastoreName.RUNNING.value
        if running in (source, target):
            other = target if source == running else source
            forward = source == running
            if other.isdigit():
                edits = self.reverse_edits(int(other))
                return core.trial(edits, principal, validate=False, forward=forward)
            if other == DatastoreName.CANDIDATE.value:
                pending = core.pending_candidate_edits()
                if pending is not None:
                    return core.trial(pending, principal, validate=False, forward=forward)
        old, close_old = self._tree(source)
        try:
            new, close_new = self._tree(target)
            try:
                return core.compare_trees(old, new, principal)
            finally:
                if close_new:
                    new.close()
        finally:
            if close_old:
                old.close()

    def _tree(self, name: str) -> tuple[ConfigStore, bool]:
        """The store of a configuration, and whether it is a copy to close."""
        core = self._core()
        if name.isdigit():
            return core.rebuilt(self.reverse_edits(int(name))), True
        return core.store(_DATASTORES[name]), False

    # ------------------------------------------------------------------ commit

    def commit(self, principal: Principal, members: Json) -> Json:
        """``cc:commit``: the candidate committed with a comment and a label, confirmed, or
        as a dry run."""
        core = self._core()
        session = current().session
        if "dry-run" in members:
            core.validate(DatastoreName.CANDIDATE)
            return render.compare_result(
                self.changes(principal, "running", "candidate"), "running", "candidate"
            )
        before = core.running.txid
        # what the commit changes, answered with its id (as a rollback answers its own)
        result = render.compare_result(
            self.changes(principal, "running", "candidate"), "running", "candidate"
        )
        comment, label = _text(members, "comment"), _text(members, "label")
        confirm = ConfirmRequest(
            None
            if members.get("confirm-timeout") is None
            else int(str(members["confirm-timeout"])),
            _text(members, "persist"),
            _text(members, "persist-id"),
        )
        with annotated(operation="commit", comment=comment, label=label):
            if confirm.timeout is None and confirm.persist_id is None:
                core.commit(principal, session=session)
            else:
                confirmed = self._confirmed()
                if confirmed is None:
                    raise refuse(
                        "operation-not-supported",
                        "confirmed commit needs the NETCONF server (--netconf-port > 0)",
                    )
                confirmed(principal, session, confirm)
        changed = core.running.txid != before
        return {"commit-id": str(core.running.txid), **result} if changed else result

    # ------------------------------------------------------------------ state

    def commits_state(self) -> Json:
        """``commits``: the kept history, newest first."""
        entries = self._history.entries(self._kept) if self._history is not None else []
        return render.commits_json(entries, self._kept if self._history is not None else 0)

    def audit_state(self) -> Json:
        """``audit``: the newest records."""
        records = self._audit.recent(AUDIT_SHOWN) if self._audit is not None else []
        return render.audit_json(records)


def register(registrations: Registrations, admin: Admin) -> None:
    """Add the RPCs and state of cats-controller-admin; the audit is default-deny-all."""
    rpcs, state = registrations.rpcs, registrations.state
    rpcs[SchemaPath(f"/{MODULE}:rollback")] = admin.rollback
    rpcs[SchemaPath(f"/{MODULE}:compare")] = admin.compare
    rpcs[SchemaPath(f"/{MODULE}:commit")] = admin.commit
    state[DataPath(f"/{MODULE}:commits")] = admin.commits_state
    state[DataPath(f"/{MODULE}:audit")] = admin.audit_state
    registrations.protected.add(AUDIT)
