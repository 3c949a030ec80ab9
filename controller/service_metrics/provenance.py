"""Decision records kept across restarts, and which decision installed each steering entry.

The C-PS keeps its decision records (``selection-decisions``, service-metrics-op 6.2.3 Step 7)
in memory, bounded by ``decision-retention``; :class:`DecisionArchive` also writes them behind
(the sweeper, at most once a second, and at shutdown) to ``STATE/decisions.sqlite`` (0600), so
that after a restart the records of the retained window (count and age) are still readable and
decision numbers go on increasing. Each service entry the C-PS intends for a forwarder names the
decision that chose it (``decision-id``); the archive keeps when each was installed, so
``cc:steering-provenance`` (``catsctl explain``) answers which decision stood at a time.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from controller.audit.storage import open_private
from controller.types import Json

LOG = logging.getLogger("catsctl.cps")
FILE_NAME = "decisions.sqlite"
#: How long decision records are kept by default (``catsctl serve --decision-max-age``).
DEFAULT_MAX_AGE_S = 7 * 24 * 3600.0

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS decisions (
        number INTEGER PRIMARY KEY, time REAL NOT NULL, record TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS installs (
        forwarder TEXT NOT NULL, cs_id TEXT NOT NULL, at REAL NOT NULL,
        decision_id TEXT, entry TEXT)""",
    "CREATE INDEX IF NOT EXISTS installs_key ON installs(forwarder, cs_id, at)",
)


@dataclass(frozen=True, slots=True)
class Installed:
    """The service entry a forwarder was intended to hold at a time, and its decision."""

    decision_id: str | None
    installed_at: float
    replaced_at: float | None
    entry: str | None


def rfc3339(moment: float) -> str:
    """A yang:date-and-time in UTC."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> float:
    """A yang:date-and-time as a POSIX time."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class DecisionArchive:
    """The sqlite file of the decision records and the steering installs."""

    def __init__(self, state_dir: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_private(state_dir / FILE_NAME, _SCHEMA)

    def last_number(self) -> int:
        """The highest decision number kept (0 when none)."""
        with self._lock:
            row = self._db.execute("SELECT MAX(number) FROM decisions").fetchone()
        return int(row[0] or 0)

    def load(self, count: int, oldest: float) -> list[Json]:
        """The newest ``count`` records since ``oldest``, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT record FROM decisions WHERE time >= ? ORDER BY number DESC LIMIT ?",
                (oldest, count),
            ).fetchall()
        return [json.loads(row[0]) for row in reversed(rows)]

    def save(self, records: Sequence[tuple[int, float, Json]], count: int, oldest: float) -> None:
        """Keep records (number, time, record JSON) and drop those out of the window."""
        rows = [(number, moment, json.dumps(record)) for number, moment, record in records]
        try:
            with self._lock:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO decisions VALUES (?, ?, ?)", rows)
                self._db.execute("DELETE FROM decisions WHERE time < ?", (oldest,))
                self._db.execute(
                    "DELETE FROM decisions WHERE number <= (SELECT MAX(number) FROM decisions) - ?",
                    (count,),
                )
                self._db.execute("DELETE FROM installs WHERE at < ?", (oldest,))
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            LOG.error("decision records: cannot keep them: %s", exc)
            self._rollback()

    def _rollback(self) -> None:
        try:
            with self._lock:
                self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def install(
        self, forwarder: str, cs_id: str, decision_id: str | None, entry: Json | None, now: float
    ) -> None:
        """Note that ``entry`` (None: no entry) is intended at ``forwarder`` from ``now``."""
        text = None if entry is None else json.dumps(entry, sort_keys=True)
        try:
            with self._lock:
                self._db.execute(
                    "INSERT INTO installs VALUES (?, ?, ?, ?, ?)",
                    (forwarder, cs_id, now, decision_id, text),
                )
        except sqlite3.Error as exc:
            LOG.error("steering provenance: cannot keep it: %s", exc)

    def installed(self, forwarder: str, cs_id: str, at: float) -> Installed | None:
        """The entry intended at ``forwarder`` for ``cs_id`` at time ``at``."""
        with self._lock:
            row = self._db.execute(
                "SELECT at, decision_id, entry FROM installs WHERE forwarder = ? AND cs_id = ? "
                "AND at <= ? ORDER BY at DESC LIMIT 1",
                (forwarder, cs_id, at),
            ).fetchone()
            if row is None:
                return None
            later = self._db.execute(
                "SELECT MIN(at) FROM installs WHERE forwarder = ? AND cs_id = ? AND at > ?",
                (forwarder, cs_id, row[0]),
            ).fetchone()
        replaced = None if later is None or later[0] is None else float(later[0])
        return Installed(row[1], float(row[0]), replaced, row[2])

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()


def open_archive(state_dir: Path | None) -> DecisionArchive | None:
    """The archive in ``state_dir``; None without one, or (logged) when it cannot be opened:
    the decisions are then kept in memory only, as before a restart."""
    if state_dir is None:
        return None
    try:
        return DecisionArchive(state_dir)
    except (OSError, sqlite3.Error) as exc:
        LOG.error("decision records: cannot open %s: %s (kept in memory only)", state_dir, exc)
        return None


def provenance_json(found: Installed | None) -> Json:
    """The output of ``cc:steering-provenance``."""
    if found is None or found.decision_id is None:
        return {}
    values: Json = {"decision-id": found.decision_id, "installed-at": rfc3339(found.installed_at)}
    if found.replaced_at is not None:
        values["replaced-at"] = rfc3339(found.replaced_at)
    if found.entry is not None:
        values["entry"] = found.entry
    return values
