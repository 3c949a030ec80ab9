"""Where commit history and audit records are kept: two small interfaces and their sqlite files.

Components talk to :class:`HistoryStore` and :class:`AuditStore` only, so a cluster (a shared
store) or a console (a reader) can put another implementation behind them. The embedded one is
sqlite (stdlib): one file each in the state directory, mode 0600 (sqlite gives its ``-wal``
and ``-shm`` files the same mode), in WAL mode with ``synchronous=NORMAL``: a commit costs no
fsync of its own (the datastore's journal already made the change durable); a power loss may
lose the last records, never corrupt the file. Both are bounded: the oldest rows beyond the
configured count are deleted (that is the audit log's rotation); rows are never updated.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

#: How often (in rows) the bound is enforced: pruning in batches keeps an append O(1).
_PRUNE_EVERY = 64


@dataclass(frozen=True, slots=True)
class CommitEntry:
    """One commit of running: who, when, how and what (cats-controller-admin ``commit``)."""

    id: int
    time: str  # RFC 3339, UTC
    user: str
    transport: str
    source: str = ""
    session: str | None = None
    operation: str | None = None
    comment: str | None = None
    label: str | None = None
    edits: int = 0
    changed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One audited event (cats-controller-admin ``audit/record``); ``id`` 0 until stored."""

    time: str
    event: str
    user: str
    transport: str = "server"
    source: str = ""
    session: str | None = None
    commit_id: int | None = None
    detail: str = ""
    id: int = 0
    node: str | None = None  # in a cluster, the replica a commit was made on (--node-id)


class HistoryStore(Protocol):
    """The commit history: entries and the reverse edits that undo each commit."""

    def append(self, entry: CommitEntry, reverse: str) -> None:
        """Keep a commit and its reverse edits (a JSON list of journal edit records)."""
        ...

    def entries(self, limit: int) -> list[CommitEntry]:
        """The newest ``limit`` commits, newest first."""
        ...

    def entry(self, commit_id: int) -> CommitEntry | None:
        """One commit, if kept."""
        ...

    def labelled(self, label: str) -> CommitEntry | None:
        """The newest commit with ``label``, if kept."""
        ...

    def reverse_after(self, commit_id: int) -> list[tuple[int, str]]:
        """(id, reverse edits) of every kept commit after ``commit_id``, newest first."""
        ...

    def close(self) -> None:
        """Close the store."""
        ...


class AuditStore(Protocol):
    """The audit log: append-only, bounded, readable newest last."""

    def append(self, record: AuditRecord) -> int:
        """Keep a record; its id."""
        ...

    def recent(self, limit: int) -> list[AuditRecord]:
        """The newest ``limit`` records, oldest first."""
        ...

    def has_commit(self, commit_id: int, time: str) -> bool:
        """Whether the commit ``commit_id`` made at ``time`` is recorded already (a replica
        of a cluster applies the cluster's log again when it starts)."""
        ...

    def close(self) -> None:
        """Close the store."""
        ...


def open_private(path: Path, schema: Sequence[str]) -> sqlite3.Connection:
    """A sqlite file readable by its owner only, in WAL mode, with ``schema`` applied."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    path.chmod(0o600)
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    for statement in schema:
        connection.execute(statement)
    return connection


class Checkpointer(threading.Thread):
    """Writes a sqlite file's WAL back to it every few seconds on a connection of its own (a
    passive checkpoint never blocks a writer), instead of whichever append fills the WAL: that
    checkpoint's fsync would otherwise land on a commit of running."""

    EVERY_S = 5.0

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        super().__init__(name=f"checkpoint-{path.name}", daemon=True)
        connection.execute("PRAGMA wal_autocheckpoint=0")
        self._path = path
        self._stopping = threading.Event()
        self.start()

    def run(self) -> None:
        """Checkpoint until stopped (or the file cannot be used any more)."""
        try:
            connection = sqlite3.connect(self._path, isolation_level=None)
        except sqlite3.Error:
            return
        try:
            while not self._stopping.wait(self.EVERY_S):
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            return
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop checkpointing (the owner checkpoints once more as it closes)."""
        self._stopping.set()
        self.join()


_HISTORY_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS commits (
        id INTEGER PRIMARY KEY, time TEXT NOT NULL, user TEXT NOT NULL,
        transport TEXT NOT NULL, source TEXT NOT NULL, session TEXT, operation TEXT,
        comment TEXT, label TEXT, edits INTEGER NOT NULL, changed TEXT NOT NULL,
        reverse TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS commits_label ON commits(label)",
    """CREATE TRIGGER IF NOT EXISTS commits_append_only BEFORE UPDATE ON commits
        BEGIN SELECT RAISE(ABORT, 'commit history is append-only'); END""",
)
_ENTRY_COLUMNS = (
    "id, time, user, transport, source, session, operation, comment, label, edits, changed"
)


def _entry(row: Sequence[object]) -> CommitEntry:
    changed = str(row[10])
    return CommitEntry(
        int(str(row[0])),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        str(row[4]),
        None if row[5] is None else str(row[5]),
        None if row[6] is None else str(row[6]),
        None if row[7] is None else str(row[7]),
        None if row[8] is None else str(row[8]),
        int(str(row[9])),
        tuple(changed.split("\n")) if changed else (),
    )


class SqliteHistory:
    """:class:`HistoryStore` in ``STATE/history.sqlite``, keeping the newest ``size``."""

    FILE_NAME = "history.sqlite"

    def __init__(self, state_dir: Path, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        path = state_dir / self.FILE_NAME
        self._db = open_private(path, _HISTORY_SCHEMA)
        self._checkpointer = Checkpointer(self._db, path)
        self._appended = 0

    def append(self, entry: CommitEntry, reverse: str) -> None:
        """Keep a commit (an id already kept is replaced: one statement per commit)."""
        row = (
            entry.id,
            entry.time,
            entry.user,
            entry.transport,
            entry.source,
            entry.session,
            entry.operation,
            entry.comment,
            entry.label,
            entry.edits,
            "\n".join(entry.changed),
            reverse,
        )
        with self._lock:
            self._db.execute(
                f"INSERT OR REPLACE INTO commits ({_ENTRY_COLUMNS}, reverse) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            self._appended += 1
            if self._appended % _PRUNE_EVERY == 0:
                self._db.execute("DELETE FROM commits WHERE id <= ?", (entry.id - self.size,))

    def entries(self, limit: int) -> list[CommitEntry]:
        """The newest ``limit`` commits (at most the kept count), newest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM commits ORDER BY id DESC LIMIT ?",
                (min(limit, self.size),),
            ).fetchall()
        return [_entry(row) for row in rows]

    def entry(self, commit_id: int) -> CommitEntry | None:
        """One commit, if kept."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM commits WHERE id = ?", (commit_id,)
            ).fetchone()
        return None if row is None else _entry(row)

    def labelled(self, label: str) -> CommitEntry | None:
        """The newest commit with ``label``."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM commits WHERE label = ? ORDER BY id DESC LIMIT 1",
                (label,),
            ).fetchone()
        return None if row is None else _entry(row)

    def reverse_after(self, commit_id: int) -> list[tuple[int, str]]:
        """(id, reverse edits) of the kept commits after ``commit_id``, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, reverse FROM commits WHERE id > ? ORDER BY id DESC", (commit_id,)
            ).fetchall()
        return [(int(row[0]), str(row[1])) for row in rows]

    def close(self) -> None:
        """Write the WAL back and close the file."""
        self._checkpointer.stop()
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()


_AUDIT_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, event TEXT NOT NULL,
        user TEXT NOT NULL, transport TEXT NOT NULL, source TEXT NOT NULL, session TEXT,
        commit_id INTEGER, detail TEXT NOT NULL, node TEXT)""",
    "CREATE INDEX IF NOT EXISTS audit_commit ON audit(commit_id)",
    """CREATE TRIGGER IF NOT EXISTS audit_append_only BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
)


class SqliteAudit:
    """:class:`AuditStore` in ``STATE/audit.sqlite``, rotated at ``size`` records."""

    FILE_NAME = "audit.sqlite"

    def __init__(self, state_dir: Path, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        path = state_dir / self.FILE_NAME
        self._db = open_private(path, _AUDIT_SCHEMA)
        columns = {str(row[1]) for row in self._db.execute("PRAGMA table_info(audit)")}
        if "node" not in columns:  # a file of a version before clusters audited commits
            self._db.execute("ALTER TABLE audit ADD COLUMN node TEXT")
        self._checkpointer = Checkpointer(self._db, path)

    def append(self, record: AuditRecord) -> int:
        """Keep a record (the oldest beyond the bound are rotated out); its id."""
        row = (
            record.time,
            record.event,
            record.user,
            record.transport,
            record.source,
            record.session,
            record.commit_id,
            record.detail,
            record.node,
        )
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO audit (time, event, user, transport, source, session, commit_id, "
                "detail, node) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            found = int(cursor.lastrowid or 0)
            if found % _PRUNE_EVERY == 0:
                self._db.execute("DELETE FROM audit WHERE id <= ?", (found - self.size,))
        return found

    def recent(self, limit: int) -> list[AuditRecord]:
        """The newest ``limit`` records, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT time, event, user, transport, source, session, commit_id, detail, id, "
                "node FROM audit ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            AuditRecord(
                str(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                str(r[4]),
                None if r[5] is None else str(r[5]),
                None if r[6] is None else int(r[6]),
                str(r[7]),
                int(r[8]),
                None if r[9] is None else str(r[9]),
            )
            for r in reversed(rows)
        ]

    def has_commit(self, commit_id: int, time: str) -> bool:
        """Whether a record of the commit ``commit_id`` made at ``time`` is kept."""
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM audit WHERE commit_id = ? AND time = ? LIMIT 1", (commit_id, time)
            ).fetchone()
        return row is not None

    def close(self) -> None:
        """Write the WAL back and close the file."""
        self._checkpointer.stop()
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()
