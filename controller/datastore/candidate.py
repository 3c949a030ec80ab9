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
    """Candidate state held by the core: every change of it runs under the core's write lock,
    and :meth:`edit` and :meth:`discard` under its read lock as well; :meth:`edit_on_copy` and
    :meth:`commit` take the read lock themselves, briefly."""

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

    def edit_on_copy(
        self, edits: Sequence[Edit], principal: Principal, *, test_only: bool
    ) -> Revision:
        """A large edit (the caller holds the write lock, not the read lock): applied to a copy
        of the candidate while readers read it as it was, then swapped in under the read lock.
        Revisions are coarse, as those of a large edit of running (:mod:`.shadow`)."""
        core = self._core
        with core.read_lock:  # a read restricted by NACM unlinks nodes of the live tree
            running = core.running
            base_txid = running.txid
            if self.store is not None:
                copy = ConfigStore(running.ctx, DatastoreName.CANDIDATE, None)
                copy.replace_tree(self.store.copy_tree())
            else:
                spare, self._spare = self._spare, None  # a copy of running nobody reads
                if spare is not None and self._spare_txid == base_txid:
                    copy = spare
                else:
                    if spare is not None:
                        spare.close()
                    copy = ConfigStore(running.ctx, DatastoreName.CANDIDATE, None)
                    copy.replace_tree(running.copy_tree())
        applier = Applier(copy.ctx, copy.tree, core.guard(principal), coarse=True)
        try:
            for edit in edits:
                applier.apply(edit)
            if test_only:
                return running.revisions.of(None)
            defaults.refresh(copy.ctx, copy.tree, applier.applied)  # as validation would
            changed = [record.path for record in applier.applied]
            with core.read_lock:
                if self.store is None:
                    self.store, copy = copy, ConfigStore(running.ctx, DatastoreName.CANDIDATE, None)
                    self._base_txid = base_txid
                else:  # the old tree goes with the copy, freed outside the read lock
                    copy.tree.replace(self.store.tree.replace(copy.tree.first[0]))
                self._edits.extend(edits)
                return self.store.revisions.record(changed, changed)
        finally:
            applier.undo.commit()  # frees the copies it kept
            copy.close()

    def pending_edits(self) -> list[Edit] | None:
        """The logged edits when they turn running into the candidate (running has not
        changed since the copy), for a comparison; [] when the candidate is running."""
        if self.store is None:
            return []
        if self._core.running.txid != self._base_txid:
            return None
        return list(self._edits)

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
        """Make the candidate current (all or nothing, through running's transaction path).

        The caller holds the write lock, not the read lock: neither running nor the candidate
        changes meanwhile, and a large commit is worked on a copy (:mod:`.shadow`) while
        reads of both go on; the candidate reads as running again once running holds it.
        """
        core = self._core
        with core.read_lock:
            if self.store is None:
                return core.running.revisions.of(None)
            if core.running.txid == self._base_txid:
                edits = list(self._edits)
            else:  # printed under the read lock: a restricted read hides parts of the tree
                document = self.store.print()
                edits = [Edit(EditOperation.REPLACE, ROOT, document, Encoding.JSON)]
        revision = core.copy_in(DatastoreName.RUNNING, edits, principal, session=session)
        with core.read_lock:
            # The first edit took the spare (_fork, edit_on_copy): there is none to free here.
            self._spare, self._spare_txid = self.store, core.running.txid  # what running holds
            self.store = None
            self._edits = []
        return revision
