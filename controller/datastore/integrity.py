"""``catsctl state check`` and ``catsctl state repair --to-last-good``: the state files, read
as the server reads them at start, and the one repair an operator may choose.

The check reads every snapshot, journal and kept document of a state directory with the same
checksums and framing rules as a start (:mod:`.journal`, :mod:`.snapshot`) and reports each:
intact (with its records), a torn tail (the start drops it), or damage (the start refuses) at
an offset. It changes nothing and may run beside a server.

The repair cuts a damaged journal at its damage, keeping the intact records before it and
losing those after it (the check says how many), after copying the whole file aside
(``NAME.journal.damaged-TIME``); it also drops a torn tail. It holds the state lock, so no
server runs meanwhile. A damaged snapshot or kept document has no earlier good copy to go
back to: the repair names it and leaves it for a restore from a backup.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from controller.datastore import journal, snapshot
from controller.datastore.damage import Damage, StateDamagedError
from controller.datastore.kept import SUFFIX as KEPT_SUFFIX
from controller.datastore.statelock import StateLock

DATASTORES = ("running", "startup")


@dataclass(frozen=True, slots=True)
class FileReport:
    """What one state file holds; ``damage`` when a start would refuse it."""

    path: Path
    summary: str
    damage: Damage | None = None
    torn: int = 0  # bytes of a torn last record (a start drops them)
    intact_records: int = 0

    @property
    def ok(self) -> bool:
        """Whether a start accepts the file as it is."""
        return self.damage is None


def _check_snapshot(path: Path) -> FileReport:
    try:
        found = snapshot.decode(path, path.read_bytes())
    except StateDamagedError as exc:
        return FileReport(path, "damaged", exc.damage)
    checksum = "checksum ok" if found.checked else "no checksum (an older version)"
    return FileReport(path, f"snapshot at transaction {found.txid} ({found.format}), {checksum}")


def _check_journal(path: Path) -> FileReport:
    scanned = journal.scan(path.read_bytes(), path)
    count = len(scanned.records)
    if scanned.damage is not None:
        return FileReport(path, "damaged", scanned.damage, intact_records=count)
    last = scanned.records[-1][1]["txid"] if scanned.records else None
    summary = f"{count} intact records" + (f", the last transaction {last}" if count else "")
    if scanned.torn:
        summary += (
            f"; a torn last record of {scanned.torn} bytes at offset {scanned.end} "
            "(never acknowledged; a start drops it)"
        )
    return FileReport(path, summary, None, scanned.torn, count)


def _check_kept(path: Path) -> FileReport:
    report = _check_snapshot(path)
    if report.ok:
        return FileReport(path, "kept document, checksum ok")
    return report


def check_state(state_dir: Path) -> list[FileReport]:
    """A report per state file of ``state_dir`` (those that exist)."""
    reports: list[FileReport] = []
    for name in DATASTORES:
        snapshot_path = state_dir / f"{name}.json"
        if snapshot_path.exists():
            reports.append(_check_snapshot(snapshot_path))
        journal_path = state_dir / f"{name}.journal"
        if journal_path.exists():
            reports.append(_check_journal(journal_path))
    reports += [_check_kept(path) for path in sorted(state_dir.glob(f"*{KEPT_SUFFIX}"))]
    return reports


def _cut(path: Path, end: int) -> None:
    with path.open("r+b") as handle:
        handle.truncate(end)
        os.fsync(handle.fileno())


def repair_to_last_good(state_dir: Path) -> tuple[list[str], list[str]]:
    """Cut each damaged journal at its damage (a copy of it kept aside) and drop torn tails.

    Returns what was done and what could not be repaired (damaged snapshots or kept
    documents), one line each.
    """
    done: list[str] = []
    left: list[str] = []
    lock = StateLock(state_dir)
    lock.acquire("state repair")
    try:
        for report in check_state(state_dir):
            if report.damage is not None and report.path.suffix == ".journal":
                stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
                aside = report.path.with_name(f"{report.path.name}.damaged-{stamp}")
                shutil.copy2(report.path, aside)
                lost = report.damage.intact_after
                _cut(report.path, report.damage.offset)
                done.append(
                    f"{report.path}: cut at offset {report.damage.offset}, keeping "
                    f"{report.intact_records} records, losing {lost} intact records after the "
                    f"damage (the whole file is kept as {aside.name})"
                )
            elif report.damage is not None:
                left.append(
                    f"{report.damage.describe()}: no earlier good copy; restore the state "
                    "directory from a backup"
                )
            elif report.torn:
                scanned = journal.scan(report.path.read_bytes(), report.path)
                _cut(report.path, scanned.end)
                done.append(f"{report.path}: dropped a torn last record of {report.torn} bytes")
    finally:
        lock.release()
    return done, left
