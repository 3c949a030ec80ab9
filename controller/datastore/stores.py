"""One configuration datastore: its libyang tree, revisions and persistence.

``running`` is persisted as snapshot + journal (every acknowledged commit is in the journal,
fsynced). ``startup`` is persisted as a snapshot alone, rewritten on each (rare) change.
``candidate`` is not persisted: after a restart it is again a copy of running (RFC 6241 8.3
does not require it to survive, and a restart ends every session that could have edited it).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.datastore import snapshot
from controller.datastore.access import Guard
from controller.datastore.api import DatastoreName, Edit, EditOperation, InsertWhere
from controller.datastore.damage import Damage, StateDamagedError
from controller.datastore.errors import DatastoreError, refuse
from controller.datastore.files import REAL_DISK, Disk
from controller.datastore.journal import Journal, Ticket
from controller.datastore.preparse import Preparse
from controller.datastore.replication import PAST_LOCKS, SESSION, Replication
from controller.datastore.revisions import Revisions
from controller.datastore.snapshot import Snapshot
from controller.datastore.transaction import Applier
from controller.datastore.tree import Tree
from controller.errors import CatsError
from controller.model import nodes
from controller.model.schema import Encoding
from controller.types import DataPath

COMPACT_MINIMUM = 1 << 20  # journal bytes before compaction is considered
#: A load this large (snapshot bytes, journal records) reports its progress.
PROGRESS_BYTES = 1 << 20
PROGRESS_RECORDS = 10_000
LOG = logging.getLogger("catsctl.serve")
#: A link to running's snapshot as loaded, for a startup that is running as loaded.
AS_LOADED = "startup-as-loaded"


@dataclass(frozen=True, slots=True)
class _Progress:
    """Start-up progress lines of a large load (a quiet one says nothing)."""

    name: str
    loud: bool

    def say(self, what: str) -> None:
        if self.loud:
            LOG.info("%s: %s", self.name, what)


def edit_record(edit: Edit) -> dict[str, object]:
    """An edit as a journal record member."""
    return {
        "op": edit.operation.value,
        "path": edit.path,
        "value": edit.value,
        "encoding": edit.encoding.value,
        "where": edit.where.value if edit.where else None,
        "point": edit.point,
    }


def edit_from_record(record: dict[str, Any]) -> Edit:
    """The inverse of :func:`edit_record`."""
    point = record.get("point")
    return Edit(
        EditOperation(record["op"]),
        DataPath(record["path"]),
        record.get("value"),
        Encoding(record.get("encoding", "json")),
        InsertWhere(record["where"]) if record.get("where") else None,
        DataPath(point) if point is not None else None,
    )


class ConfigStore:
    """A datastore tree (first top-level node in ``first[0]``) and what goes with it."""

    def __init__(
        self,
        ctx: Any,
        name: DatastoreName,
        folder: Path | None,
        disk: Disk = REAL_DISK,
        schema_id: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.name = name
        self.schema_id = schema_id  # the schema's fingerprint: snapshots are LYB (None: JSON)
        self.current = False  # whether the snapshot alone holds the tree, in the current form
        self.tree = Tree(ctx)
        self.first = self.tree.first  # the first top-level sibling, for reads
        self.journal = Journal(folder, name.value, disk) if folder is not None else None
        self.revisions = Revisions()
        self.txid = 0
        #: Where commits of running go instead of the journal (a cluster), when set.
        self.replication: Replication | None = None

    def load(self, *, with_journal: bool = True, preparse: Preparse | None = None) -> bool:
        """Load the snapshot and replay the journal, then validate everything once.

        A LYB snapshot of this schema with no journal after it is the validated tree that was
        printed (with its defaults): it is not validated again (:mod:`.snapshot`). With
        ``preparse`` the tree of that snapshot may already be parsed (:mod:`.preparse`).
        Returns whether anything was persisted.
        """
        if self.journal is None:
            return False
        started = time.monotonic()
        loaded = self.journal.load()
        records = loaded.records if with_journal else ()
        found = loaded.snapshot
        size = len(found.body) if found is not None else 0
        progress = _Progress(
            self.name.value, size >= PROGRESS_BYTES or len(records) >= PROGRESS_RECORDS
        )
        if found is not None:
            progress.say(f"loading the snapshot ({size / 1e6:.1f} MB, {found.format})")
            self.tree.replace(self._parse(found, preparse))
        self.txid = loaded.txid
        for number, record in enumerate(records, start=1):
            if number % PROGRESS_RECORDS == 1 or number == len(records):
                progress.say(f"replaying the journal: record {number} of {len(records)}")
            applier = Applier(self.ctx, self.tree, Guard(None, "journal"))
            edits = record.get("edits")
            for item in edits if isinstance(edits, list) else ():
                applier.apply(edit_from_record(item))
            applier.undo.commit()
            self.txid = int(str(record["txid"]))
        trusted = self._same_schema(found) and not loaded.records
        if not trusted:
            progress.say("validating")
            self.validate()
        self.current = trusted or (found is None and not loaded.records)
        progress.say(f"loaded at transaction {self.txid} in {time.monotonic() - started:.1f} s")
        if loaded.time:
            self.revisions = Revisions(datetime.fromisoformat(loaded.time))
        if loaded.legacy:  # rewritten with checksums now, not at the next compaction
            LOG.info("%s: rewriting the state files of an older version", self.name.value)
            self.write_snapshot(self.txid, datetime.now(UTC).isoformat())
        return found is not None or bool(loaded.records)

    def _same_schema(self, found: Snapshot | None) -> bool:
        """Whether ``found`` is a LYB snapshot printed with this store's schema."""
        return (
            found is not None
            and found.checked
            and found.format == snapshot.LYB
            and self.schema_id is not None
            and found.schema == self.schema_id
        )

    def _parse(self, found: Snapshot, preparse: Preparse | None = None) -> Any:
        if preparse is not None and self._same_schema(found):
            tree = preparse.take(found)
            if tree is not None:
                return tree
        if found.format == snapshot.JSON:
            # printed by libyang, so in libyang's order: no place to search for (linear)
            return nodes.parse_printed(self.ctx, found.document)
        assert self.journal is not None
        try:
            return nodes.parse_lyb(self.ctx, found.body, newer_modules=not self._same_schema(found))
        except CatsError as exc:
            reason = "; ".join(item.message for item in exc.items)
            where = "another schema (other YANG modules or libyang)"
            if self._same_schema(found):
                where = "this schema"
            raise StateDamagedError(
                Damage(self.journal.snapshot_path, 0, f"a LYB snapshot of {where}: {reason}")
            ) from exc

    def validate(self) -> None:
        """Full ``lyd_validate_all`` (at load, after a replay, for candidate validation)."""
        self.tree.before_validation()
        try:
            nodes.validate_all(self.ctx, self.first)
        except CatsError as exc:
            raise DatastoreError(*exc.items) from exc
        finally:
            self.tree.invalidate()  # libyang may have added defaults or dropped cases

    def persist(  # noqa: PLR0913 - what a cluster record holds besides the edits
        self,
        edits: Sequence[Edit],
        *,
        defer: bool = False,
        changed: Sequence[DataPath] = (),
        user: str = "",
        meta: Mapping[str, str] | None = None,
        session: str | None = None,
        past_locks: bool = False,
    ) -> Ticket | None:
        """Make a commit durable before it is acknowledged (running: a journal record, or the
        cluster's next transaction; any other datastore: a new snapshot). On failure nothing of
        it is left on disk.

        With ``defer`` (running only) the record is written but not fsynced: the returned
        ticket must go to :meth:`sync` before the commit is acknowledged (group commit).
        ``changed``, ``user`` and ``meta`` (the time and request context the commit history
        keeps) go into a cluster's record (:mod:`.replication`); ``session`` (the session
        committing) and ``past_locks`` (the server's own commit) say how the cluster's lock of
        running guards it (:data:`.replication.SESSION`).
        """
        if self.replication is not None:
            now = datetime.now(UTC).isoformat()
            record: dict[str, object] = {
                "txid": self.txid + 1,
                "time": now,
                "user": user,
                "edits": [edit_record(edit) for edit in edits],
                "changed": [str(path) for path in changed],
                **(meta or {}),
                SESSION: session,
                PAST_LOCKS: past_locks,
            }
            self.replication.commit(self.txid + 1, record)
            self.txid += 1
            return None
        if self.journal is None:
            self.txid += 1
            return None
        now = datetime.now(UTC).isoformat()
        if self.name is not DatastoreName.RUNNING:
            self.write_snapshot(self.txid + 1, now)
            self.txid += 1
            return None
        record = {"txid": self.txid + 1, "time": now, "edits": [edit_record(e) for e in edits]}
        ticket = None
        try:
            if defer:
                ticket = self.journal.write(record)
            else:
                self.journal.append(record)
        except OSError as exc:
            raise refuse("operation-failed", f"cannot persist the commit: {exc}") from exc
        self.txid += 1
        return ticket

    def sync(self, ticket: Ticket | None) -> None:
        """Wait until the commit of ``ticket`` is durable (without the core's lock).

        Raises:
            DatastoreError: the fsync failed: the commit is applied but may not survive a
                crash, and the server refuses every later commit until it is restarted.
        """
        if self.journal is None or ticket is None:
            return
        try:
            self.journal.sync(ticket)
        except OSError as exc:
            raise refuse(
                "operation-failed", f"the commit is applied but not durable: {exc}"
            ) from exc

    def retract(self) -> None:
        """Take back the last :meth:`persist` of running (a commit hook refused the commit)."""
        if self.journal is not None:
            self.journal.retract()
        self.txid -= 1

    def compact_if_due(self, minimum: int = COMPACT_MINIMUM) -> None:
        """Write a new snapshot when the journal has outgrown the last one.

        The commit that made it due is already durable and acknowledged, so a failure (a full
        disk) is logged and the journal simply keeps growing until a later try succeeds.
        """
        if self.journal is None or not self.journal.due(minimum):
            return
        try:
            self.write_snapshot(self.txid, datetime.now(UTC).isoformat())
        except CatsError as exc:
            LOG.warning("%s: compaction postponed: %s", self.name.value, exc)

    def write_snapshot(self, txid: int, time: str) -> None:
        """Print the whole tree and make it the snapshot at ``txid``."""
        if self.journal is None:
            return
        lyb = self.schema_id is not None and bool(self.first[0])
        document = nodes.print_lyb(self.first[0]) if lyb else self.print()
        try:
            self.journal.write_snapshot(
                document, txid, time, lyb_schema=self.schema_id if lyb else None
            )
        except OSError as exc:
            raise refuse("operation-failed", f"cannot write the snapshot: {exc}") from exc
        self.current = True

    def compact_at_close(self) -> None:
        """Fold the journal into the snapshot (and write it in the current form), so that the
        next start loads one snapshot and validates nothing (a clean shutdown)."""
        if self.journal is None or (self.current and not self.journal.journal_bytes):
            return
        if self.journal.broken:
            return  # commits whose fsync failed were never acknowledged: keep them out
        try:
            self.write_snapshot(self.txid, datetime.now(UTC).isoformat())
        except CatsError as exc:
            LOG.warning("%s: no compaction at shutdown: %s", self.name.value, exc)

    def print(self) -> str:
        """The whole tree as RFC 7951 JSON (explicit nodes only)."""
        if not self.first[0]:
            return "{}"
        flags = nodes.lib.LYD_PRINT_WITHSIBLINGS | nodes.lib.LYD_PRINT_WD_EXPLICIT
        return nodes.print_tree(self.first[0], Encoding.JSON, flags)

    def keep_as_loaded(self) -> Path | None:
        """A hard link to the snapshot when it alone holds the tree as loaded (a LYB
        snapshot of this schema, nothing replayed: :attr:`current`), so that the tree as
        loaded can be parsed from it after the tree changed and a compaction replaced the
        file; None when it does not hold it or the file system cannot link."""
        if self.journal is None or not self.current or self.journal.journal_bytes:
            return None
        kept = self.journal.snapshot_path.with_name(AS_LOADED)
        try:
            kept.unlink(missing_ok=True)
            os.link(self.journal.snapshot_path, kept)
        except OSError as exc:
            LOG.debug("%s: no link to the snapshot as loaded: %s", self.name.value, exc)
            return None
        return kept

    def parse_kept(self, kept: Path) -> Any:
        """The tree of a snapshot :meth:`keep_as_loaded` linked (checked as at load); the
        link is removed."""
        try:
            data = kept.read_bytes()
            return self._parse(snapshot.decode(kept, data))
        finally:
            kept.unlink(missing_ok=True)

    def forget_as_loaded(self) -> None:
        """Remove a link :meth:`keep_as_loaded` made that nobody read (at close, at start
        after a crash)."""
        if self.journal is not None:
            self.journal.snapshot_path.with_name(AS_LOADED).unlink(missing_ok=True)

    def replace_tree(self, first: Any) -> None:
        """Swap in another tree (a committed candidate copy); frees the old one."""
        nodes.free_all(self.tree.replace(first))

    def copy_tree(self) -> Any:
        """A copy of the whole tree (``lyd_dup_siblings``: O(datastore))."""
        out = nodes.ffi.new("struct lyd_node **", nodes.ffi.NULL)
        if self.first[0] and nodes.lib.lyd_dup_siblings(
            self.first[0],
            nodes.ffi.NULL,
            nodes.lib.LYD_DUP_RECURSIVE | nodes.lib.LYD_DUP_WITH_FLAGS,
            out,
        ):
            raise nodes.fail(self.ctx)
        return out[0]

    def close(self) -> None:
        """Free the tree and close the files."""
        nodes.free_all(self.tree.replace(nodes.ffi.NULL))
        if self.journal is not None:
            self.journal.close()
