"""The sqlite stores behind the history and audit interfaces: private files, bounded, ordered,
append-only."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from controller.audit import (
    AuditRecord,
    CommitEntry,
    Event,
    SqliteAudit,
    SqliteHistory,
    install,
    record,
)
from controller.audit.context import RequestInfo, annotated, current, request


def entry(number: int, label: str | None = None) -> CommitEntry:
    return CommitEntry(
        number, "2026-12-02T00:00:00Z", "alice", "restconf", "127.0.0.1", label=label
    )


def test_the_history_keeps_order_labels_and_reverse_edits(tmp_path: Path) -> None:
    history = SqliteHistory(tmp_path, 100)
    for number in range(1, 6):
        history.append(entry(number, "v1" if number == 2 else None), f"[{number}]")
    assert [e.id for e in history.entries(3)] == [5, 4, 3]
    assert history.labelled("v1") == entry(2, "v1")
    assert history.reverse_after(2) == [(5, "[5]"), (4, "[4]"), (3, "[3]")]
    assert stat.S_IMODE((tmp_path / SqliteHistory.FILE_NAME).stat().st_mode) == 0o600
    history.close()


def test_the_history_is_bounded(tmp_path: Path) -> None:
    history = SqliteHistory(tmp_path, 10)
    for number in range(1, 200):
        history.append(entry(number), "[]")
    assert len(history.entries(1000)) == 10
    assert history.reverse_after(0)[-1][0] > 100  # the old ones were pruned
    history.close()


def test_the_audit_is_append_only_and_rotated(tmp_path: Path) -> None:
    audit = SqliteAudit(tmp_path, 100)
    for number in range(300):
        audit.append(AuditRecord("2026-12-02T00:00:00Z", "commit", "alice", detail=str(number)))
    recent = audit.recent(1000)
    assert len(recent) <= 100 + 64  # rotated in batches
    assert recent[-1].detail == "299"
    assert [r.id for r in recent] == sorted(r.id for r in recent)
    database = sqlite3.connect(tmp_path / SqliteAudit.FILE_NAME)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        database.execute("UPDATE audit SET detail = 'forged'")
    database.close()
    audit.close()


def test_the_audit_keeps_the_node_and_finds_a_commit(tmp_path: Path) -> None:
    """A cluster's commit is recorded with the replica that made it, and found again by its
    number and time (a replica applying the log again does not record it twice)."""
    audit = SqliteAudit(tmp_path, 100)
    made = AuditRecord("2026-12-02T00:00:01Z", "commit", "alice", commit_id=7, node="cps1")
    audit.append(made)
    audit.append(AuditRecord("2026-12-02T00:00:02Z", "lock", "bob"))
    assert [(r.commit_id, r.node) for r in audit.recent(2)] == [(7, "cps1"), (None, None)]
    assert audit.has_commit(7, "2026-12-02T00:00:01Z")
    assert not audit.has_commit(7, "2026-12-02T00:00:02Z")  # another cluster's commit 7
    assert not audit.has_commit(8, "2026-12-02T00:00:01Z")
    audit.close()


def test_an_audit_file_without_nodes_gains_the_column(tmp_path: Path) -> None:
    """A file of a version before clusters audited commits opens, its records kept."""
    database = sqlite3.connect(tmp_path / SqliteAudit.FILE_NAME)
    database.execute(
        "CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, "
        "event TEXT NOT NULL, user TEXT NOT NULL, transport TEXT NOT NULL, source TEXT NOT "
        "NULL, session TEXT, commit_id INTEGER, detail TEXT NOT NULL)"
    )
    database.execute(
        "INSERT INTO audit (time, event, user, transport, source, detail) "
        "VALUES ('2026-12-01T00:00:00Z', 'commit', 'old', 'server', '', '')"
    )
    database.commit()
    database.close()
    audit = SqliteAudit(tmp_path, 100)
    audit.append(AuditRecord("2026-12-02T00:00:00Z", "commit", "new", node="cps2"))
    assert [(r.user, r.node) for r in audit.recent(10)] == [("old", None), ("new", "cps2")]
    audit.close()


def test_record_takes_the_request_context_and_redacts(tmp_path: Path) -> None:
    audit = SqliteAudit(tmp_path, 100)
    install(audit)
    try:
        with request(RequestInfo("netconf", "192.0.2.1", "7")), annotated(comment="why"):
            assert current().comment == "why"
            record(Event.LOCK, "bob", detail="running locked by $0$oops")
        assert current() == RequestInfo()
        found = audit.recent(1)[0]
        assert (found.transport, found.source, found.session) == ("netconf", "192.0.2.1", "7")
        assert "$0$oops" not in found.detail
    finally:
        install(None)
        audit.close()
    assert record(Event.LOCK, "bob") == 0  # no store: nothing to do
