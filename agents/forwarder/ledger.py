"""When the forwarder first accepted each entry's content, kept across restarts.

An entry without ``installed-at`` has its lifetime counted from that moment (ietf-cats-steering
grouping ``expiry``), so a restart must not restart it. The times are kept in the state
directory as a snapshot, ``accepted.json`` (rewritten through a temporary file, fsync and
rename), and a journal, ``accepted.journal``: one JSON line per entry whose time changed since
the snapshot, appended and fsynced with each commit, so that a commit costs in proportion to
the entries it changed, not to the table. The journal is folded into a new snapshot once it
holds more lines than the snapshot has entries (and at least :data:`COMPACT_LINES`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from agents.forwarder.table import Accepted
from agents.forwarder.values import EntryKey, Kind

LOG = logging.getLogger("agents.forwarder")
FILE_NAME = "accepted.json"
JOURNAL_NAME = "accepted.journal"
COMPACT_LINES = 4096
Changes = Mapping[EntryKey, Accepted | None]  # None: the entry is forgotten


def _name(key: EntryKey) -> str:
    return f"{key.kind.value}|{key.name}"


def _key(name: str) -> EntryKey:
    kind, _, key = name.partition("|")
    return EntryKey(Kind(kind), key)


def _snapshot(path: Path) -> dict[EntryKey, Accepted]:
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        LOG.warning("%s ignored: %s", path, exc)
        return {}
    return {_key(str(name)): Accepted(str(fp), float(at)) for name, (fp, at) in saved.items()}


def _replay(path: Path, found: dict[EntryKey, Accepted]) -> int:
    """Apply the journal's lines to ``found``; how many were read (a torn last line, from a
    crash while appending, is ignored: its commit was not acknowledged)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return 0
    except OSError as exc:
        LOG.warning("%s ignored: %s", path, exc)
        return 0
    count = 0
    for line in text.splitlines():
        try:
            record = json.loads(line)
            key = _key(str(record["k"]))
            if record.get("d"):
                found.pop(key, None)
            else:
                found[key] = Accepted(str(record["f"]), float(record["t"]))
        except (ValueError, KeyError, TypeError) as exc:
            LOG.warning("%s: a line ignored: %s", path, exc)
            continue
        count += 1
    return count


def load(state_dir: Path) -> dict[EntryKey, Accepted]:
    """The times saved in a state directory (none when missing or unreadable)."""
    found = _snapshot(state_dir / FILE_NAME)
    _replay(state_dir / JOURNAL_NAME, found)
    return found


def save(state_dir: Path, accepted: Mapping[EntryKey, Accepted]) -> None:
    """Write the times as a new snapshot (atomically) and drop the journal it holds."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / FILE_NAME
    temporary = path.with_suffix(".tmp")
    document = {_name(k): [a.fingerprint, a.at] for k, a in accepted.items()}
    with temporary.open("w", encoding="utf-8") as sink:
        json.dump(document, sink, separators=(",", ":"))
        sink.flush()
        os.fsync(sink.fileno())
    temporary.replace(path)
    (state_dir / JOURNAL_NAME).unlink(missing_ok=True)  # its lines are in the snapshot


def _line(key: EntryKey, accepted: Accepted | None) -> str:
    if accepted is None:
        return json.dumps({"k": _name(key), "d": True}) + "\n"
    return json.dumps({"k": _name(key), "f": accepted.fingerprint, "t": accepted.at}) + "\n"


def append(state_dir: Path, changes: Changes) -> None:
    """Append the changes to the journal (fsynced)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    with (state_dir / JOURNAL_NAME).open("a", encoding="utf-8") as sink:
        sink.write("".join(_line(key, accepted) for key, accepted in changes.items()))
        sink.flush()
        os.fsync(sink.fileno())


class Ledger:
    """The acceptance times as saved in one state directory, kept current commit by commit."""

    def __init__(self, state_dir: Path) -> None:
        self._dir = state_dir
        self.saved = _snapshot(state_dir / FILE_NAME)
        self._lines = _replay(state_dir / JOURNAL_NAME, self.saved)

    def update(self, changes: Changes) -> int:
        """Persist the changes that move a saved time; how many did."""
        moved = {k: v for k, v in changes.items() if self.saved.get(k) != v}
        if not moved:
            return 0
        for key, accepted in moved.items():
            if accepted is None:
                self.saved.pop(key, None)
            else:
                self.saved[key] = accepted
        if self._lines + len(moved) > max(COMPACT_LINES, len(self.saved)):
            save(self._dir, self.saved)
            self._lines = 0
        else:
            append(self._dir, moved)
            self._lines += len(moved)
        return len(moved)

    def replace(self, accepted: Mapping[EntryKey, Accepted]) -> int:
        """Make the saved times exactly ``accepted``; how many changed."""
        gone: dict[EntryKey, Accepted | None] = {k: None for k in self.saved if k not in accepted}
        return self.update(gone | dict(accepted))
