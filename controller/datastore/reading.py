"""Reads of the server core: datastores (RFC 8040 4.3, RFC 8527 3.2), revisions, reviews.

A read of a configuration datastore renders the committed tree under the core's read lock
(what NACM hides is unlinked for the read's time, :mod:`.hiding`); one of operational asks the
state providers first, outside the lock. A review (a trial of edits, a comparison of trees)
changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from controller.datastore import operational, reads, review
from controller.datastore.api import (
    Content,
    DatastoreName,
    Edit,
    Principal,
    ReadRequest,
    ReadResult,
    Revision,
    WithDefaults,
)
from controller.datastore.compare import ChangeItem
from controller.datastore.hiding import Hider, Selection
from controller.datastore.parts import CoreParts
from controller.datastore.stores import ConfigStore
from controller.datastore.validation import IndexesNeededError
from controller.model import nodes
from controller.types import DataPath

YANG_LIBRARY = DataPath("/ietf-yang-library:yang-library")
MODULES_STATE = DataPath("/ietf-yang-library:modules-state")  # RFC 7895, legacy in RFC 8525


class Reading(CoreParts):
    """The reads of the core."""

    def read(self, request: ReadRequest, principal: Principal) -> ReadResult:
        """Read a subtree of a datastore (RFC 8040 4.3, RFC 8527 3.2). What the principal may
        not read is left out silently (RFC 8341 3.4.5): a target it may not read reads as
        absent."""
        nodes.clean_errors(self.ctx)
        if request.datastore is DatastoreName.OPERATIONAL:
            return self._read_operational(request, principal)
        with self._lock:
            store = self.store(request.datastore)
            revision = store.revisions.of(request.path)
            if request.content is Content.NONCONFIG:
                return ReadResult(None if request.path else reads.empty(request.encoding), revision)
            user = self.authorization.user(principal)
            with Hider(store.tree) as hider:
                if user is not None and not self.authorization.hide(
                    user, store.tree, request.path, hider
                ):
                    return ReadResult(None, revision)  # the target may not be read: absent
                if request.selection is not None:
                    defaults = request.with_defaults is WithDefaults.REPORT_ALL
                    Selection(self.ctx, request.selection, defaults=defaults).apply(
                        store.tree, hider
                    )
                    request = replace(request, selection=None, path=None)
                document = reads.render(self.ctx, store.first[0], request)
            return ReadResult(document, revision)

    def _read_operational(self, request: ReadRequest, principal: Principal) -> ReadResult:
        if request.selection is not None:  # the same nodes, selected on a copy
            union = " | ".join(request.selection)
            request = replace(request, selection=None, xpath_filter=union)
        regions = operational.provider_paths(self._state, request)
        states = {region: self._state[region]() for region in regions}  # outside the lock
        with self._lock:
            tree = operational.build(self.ctx, self.running.first[0], request, states)
            try:
                if request.with_origin:
                    origins = {r: operational.LEARNED for r in states}
                    for region in (YANG_LIBRARY, MODULES_STATE):
                        if region in origins:
                            origins[region] = operational.SYSTEM
                    operational.annotate_origin(self.ctx, tree, request, origins)
                user = self.authorization.user(principal)
                if user is not None:
                    tree[0] = self.authorization.prune(user, tree[0])
                document = reads.render(self.ctx, tree[0], request)
            finally:
                nodes.free_all(tree[0])
            revision = operational.state_revision(self.running.revisions.of(request.path), states)
            return ReadResult(document, revision)

    def revision(self, datastore: DatastoreName, path: DataPath | None) -> Revision:
        """The revision of a resource (operational: running's, changed by the state under it)."""
        if datastore is DatastoreName.OPERATIONAL:
            request = ReadRequest(datastore, path)
            regions = operational.provider_paths(self._state, request)
            states = {region: self._state[region]() for region in regions}  # outside the lock
            with self._lock:
                return operational.state_revision(self.running.revisions.of(path), states)
        with self._lock:
            return self.store(datastore).revisions.of(path)

    def trial(
        self, edits: Sequence[Edit], principal: Principal, *, validate: bool, forward: bool = True
    ) -> list[ChangeItem]:
        """What ``edits`` would change in running, as ``principal`` may read it, changing
        nothing (:func:`review.trial`). With ``validate`` the edits are access-checked as the
        principal's and the result validated, as a commit would be: a dry run."""
        printer = review.reader_printer(self.authorization.user(principal))
        guard = self.guard(principal) if validate else review.UNGUARDED
        with self._lock:
            validator = self.validator if validate else None
            try:
                return review.trial(self.running, edits, guard, validator, printer, forward=forward)
            except IndexesNeededError:  # undone: built on running as committed, then again
                self.validator.ready()
                return review.trial(self.running, edits, guard, validator, printer, forward=forward)

    def compare_trees(
        self, old: ConfigStore, new: ConfigStore, principal: Principal
    ) -> list[ChangeItem]:
        """The changes from one whole tree to another, as ``principal`` may read them."""
        printer = review.reader_printer(self.authorization.user(principal))
        with self._lock:
            return review.compare_trees(old, new, printer)

    def rebuilt(self, edits: Sequence[Edit]) -> ConfigStore:
        """A copy of running with ``edits`` applied (the caller closes it)."""
        with self._lock:
            return review.rebuilt(self.running, edits)

    def pending_candidate_edits(self) -> list[Edit] | None:
        """The candidate's edits when replaying them on running gives the candidate (it was
        copied from running as running is now); else None."""
        with self._lock:
            return self.candidate.pending_edits()


__all__ = ["MODULES_STATE", "YANG_LIBRARY", "Reading"]
