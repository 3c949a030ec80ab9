"""The candidate datastore (RFC 6241 8.3): a copy of running once edited, and its edit log.

Until its first edit the candidate *is* running (reads go there; no copy is made). Edits are
parsed and applied with the same operation semantics as running, but the candidate may be
invalid until it is committed (RFC 6241 8.3.1). ``commit`` replays the logged edits on running
as one transaction when running has not changed since the copy (so it takes the incremental
path); otherwise it replaces running with the candidate's content (validated in full).

After a commit the copy holds what running now holds, so it is kept as the base of the next
first edit while running stays at that transaction: a push cycle (edit, commit) at 100k
entries then neither copies nor frees the whole tree (together ~0.5 s there). The copy was not
validated, so it may lack default nodes running has; reads of an unedited candidate go to
running, and a commit replays the edits on running. Each edit puts the defaults around the nodes it
changed right (:mod:`.defaults`), so an edited candidate reads as validation would leave it.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.datastore import defaults
from controller.datastore.api import DatastoreName, Edit, EditOperation, Principal, Revision
from controller.datastore.datapath import ROOT
from controller.datastore.seams import CandidateHost
from controller.datastore.stores import ConfigStore
from controller.datastore.transaction import Applier
from controller.errors import CatsError
from controller.model.schema import Encoding


class Candidate:
    """Candidate state held by the core (all methods run under the core's lock)."""

    def __init__(self, core: CandidateHost) -> None:
        self._core = core
        self.store: ConfigStore | None = None
        self._base_txid = 0
        self._edits: list[Edit] = []
        self._spare: ConfigStore | None = None  # a copy of running at self._spare_txid
        self._spare_txid = -1

    @property
    def modified(self) -> bool:
        """Whether the candidate differs from running by uncommitted edits."""
        return self.store is not None

    def _fork(self) -> ConfigStore:
        if self.store is None:
            running = self._core.running
            store, self._spare = self._spare, None
            if store is None or self._spare_txid != running.txid:
                if store is not None:
                    store.close()
                store = ConfigStore(running.ctx, DatastoreName.CANDIDATE, None)
                store.replace_tree(running.copy_tree())
            self.store = store
            self._base_txid = running.txid
        return self.store

    def edit(
        self, edits: Sequence[Edit], principal: Principal, session: str | None, *, test_only: bool
    ) -> Revision:
        """Apply edits to the candidate (parsed and type-checked, validated at commit)."""
        del session
        fresh = self.store is None
        store = self._fork()
        applier = Applier(store.ctx, store.tree, self._core.guard(principal))
        try:
            for edit in edits:
                applier.apply(edit)
        except CatsError:
            applier.undo.rollback()
            if fresh:
                self.discard()
            raise
        if test_only:
            applier.undo.rollback()
            if fresh:
                self.discard()
            return self._core.running.revisions.of(None)
        applier.undo.commit()
        defaults.refresh(store.ctx, store.tree, applier.applied)  # as validation would
        self._edits.extend(edits)
        changed = [record.path for record in applier.applied]
        whole = [path for record in applier.applied for path in record.whole]
        return store.revisions.record(changed, whole)

    def discard(self) -> None:
        """Drop the copy and the log: the candidate is running again."""
        if self.store is not None:
            self.store.close()
        self.store = None
        self._edits = []

    def close(self) -> None:
        """Free every copy (the core is closing)."""
        self.discard()
        if self._spare is not None:
            self._spare.close()
            self._spare = None

    def commit(self, principal: Principal, session: str | None) -> Revision:
        """Make the candidate current (all or nothing, through running's transaction path)."""
        core = self._core
        if self.store is None:
            return core.running.revisions.of(None)
        if core.running.txid == self._base_txid:
            edits = list(self._edits)
        else:
            document = self.store.print()
            edits = [Edit(EditOperation.REPLACE, ROOT, document, Encoding.JSON)]
        revision = core.edit(DatastoreName.RUNNING, edits, principal, session=session)
        # The first edit took the spare (_fork), so there is none to free here.
        self._spare, self._spare_txid = self.store, core.running.txid  # what running holds
        self.store = None
        self._edits = []
        return revision
