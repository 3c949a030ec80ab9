"""Crash-safe persistence of a datastore: a checksummed snapshot plus an append-only journal.

* The snapshot (:mod:`.snapshot`) is the whole tree under a checksummed header, replaced
  atomically (temp file, fsync, rename, fsync of the folder).
* Each committed transaction is appended to the journal as one frame and fsynced before the
  edit is acknowledged. Commits made at the same time share one fsync (group commit): a
  commit writes its frame under the core's lock and gets a :class:`Ticket`; after the lock is
  released it waits in :meth:`Journal.sync` until an fsync that started after its write has
  returned. One waiter (the leader) runs the fsync for everyone written so far while the next
  commits are applied, so N sessions pay about one fsync per round instead of N.
  A frame is a 16-byte header, ``magic`` (4 bytes), ``length`` and the
  CRC-32 of the record (4 bytes each, big endian) and the CRC-32 of those 12 bytes, followed by
  the record (JSON). The header's own checksum means a damaged length is found as damage
  instead of being read as a record cut short.
* At load, a last frame cut short by the end of the file is a torn tail: a crash in the middle
  of its write, before it was acknowledged. It is dropped, truncated away and logged. Any other
  bad frame (a checksum that does not match, a header that is not one) is damage, also as the
  last frame: loading stops with :class:`~.damage.StateDamagedError` naming the file and the
  offset, and how many intact records follow, rather than losing acknowledged edits silently.
* Compaction writes a new snapshot and empties the journal; records whose ``txid`` the snapshot
  already holds are skipped at load, so a crash between the two steps loses nothing.

A journal of an older version (frames of ``length`` and ``crc32`` only, no magic) is read by
the same rules and rewritten in this format by the store (see ``ConfigStore.load``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import struct
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from controller.datastore import snapshot
from controller.datastore.damage import Damage, StateDamagedError
from controller.datastore.files import REAL_DISK, Disk, write_atomically
from controller.datastore.snapshot import Snapshot
from controller.observability.metrics import JOURNAL_FSYNC

LOG = logging.getLogger(__name__)
MAGIC = b"CJ2\n"
_HEAD = struct.Struct(">4sII")  # magic, length, crc32 of the record
_HEAD_CRC = struct.Struct(">I")
HEADER_SIZE = _HEAD.size + _HEAD_CRC.size
_LEGACY = struct.Struct(">II")  # length, crc32 (journals of an older version)


def frame(record: dict[str, object]) -> bytes:
    """One journal frame."""
    payload = json.dumps(record, separators=(",", ":")).encode()
    head = _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload))
    return head + _HEAD_CRC.pack(zlib.crc32(head)) + payload


@dataclass(frozen=True, slots=True)
class Scan:
    """What a journal holds: intact records (with the offset after each), then either the
    end, a torn tail (``torn`` bytes from ``end``) or damage at ``end``."""

    records: tuple[tuple[int, dict[str, object]], ...]
    end: int
    torn: int = 0
    damage: Damage | None = None
    legacy: bool = False


class _BadFrameError(Exception):
    """A frame that is not intact: ``torn`` when the file ends inside it."""

    def __init__(self, reason: str, *, torn: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.torn = torn


def _record(payload: bytes) -> dict[str, object]:
    try:
        record = json.loads(payload)
        int(str(record["txid"]))
    except (ValueError, TypeError, KeyError) as exc:
        raise _BadFrameError(f"the record is not a transaction: {exc}") from None
    if not isinstance(record, dict):
        raise _BadFrameError("the record is not a transaction")
    return record


def _frame_at(data: bytes, offset: int) -> tuple[int, dict[str, object]]:
    """The record of the frame at ``offset`` and the offset after it."""
    rest = len(data) - offset
    if rest < HEADER_SIZE:
        if MAGIC.startswith(data[offset : offset + len(MAGIC)]):
            raise _BadFrameError("the file ends inside a record header", torn=True)
        raise _BadFrameError("no record header starts here")
    magic, length, crc = _HEAD.unpack_from(data, offset)
    (head_crc,) = _HEAD_CRC.unpack_from(data, offset + _HEAD.size)
    if magic != MAGIC:
        raise _BadFrameError("no record header starts here")
    if zlib.crc32(data[offset : offset + _HEAD.size]) != head_crc:
        raise _BadFrameError("record header checksum mismatch")
    start = offset + HEADER_SIZE
    if start + length > len(data):
        raise _BadFrameError(f"the file ends inside a record of {length} bytes", torn=True)
    payload = data[start : start + length]
    if zlib.crc32(payload) != crc:
        raise _BadFrameError("record checksum mismatch")
    return start + length, _record(payload)


def _legacy_frame_at(data: bytes, offset: int) -> tuple[int, dict[str, object]]:
    if len(data) - offset < _LEGACY.size:
        raise _BadFrameError("the file ends inside a record header", torn=True)
    length, crc = _LEGACY.unpack_from(data, offset)
    start = offset + _LEGACY.size
    if start + length > len(data):
        raise _BadFrameError(f"the file ends inside a record of {length} bytes", torn=True)
    payload = data[start : start + length]
    if zlib.crc32(payload) != crc:
        raise _BadFrameError("record checksum mismatch")
    return start + length, _record(payload)


def _intact_after(data: bytes, offset: int) -> int:
    """How many intact frames start after ``offset`` (found by their magic)."""
    found = 0
    position = data.find(MAGIC, offset + 1)  # a damaged magic at 0 is no frame either
    while position >= 0:
        try:
            end, _ = _frame_at(data, position)
        except _BadFrameError:
            position = data.find(MAGIC, position + 1)
            continue
        found += 1
        position = data.find(MAGIC, end)
    return found


def scan(data: bytes, path: Path) -> Scan:
    """Read the frames of a journal's content (``path`` names it in a :class:`Damage`)."""
    legacy = bool(data) and not data.startswith(MAGIC)
    if legacy:  # an older version's journal, if its first record is intact
        try:
            _legacy_frame_at(data, 0)
        except _BadFrameError:
            damage = Damage(path, 0, "no record header starts here", 0, _intact_after(data, 0))
            return Scan((), 0, 0, damage)
    read = _legacy_frame_at if legacy else _frame_at
    records: list[tuple[int, dict[str, object]]] = []
    offset = 0
    while offset < len(data):
        try:
            offset, record = read(data, offset)
        except _BadFrameError as bad:
            if bad.torn:
                return Scan(tuple(records), offset, len(data) - offset, None, legacy)
            after = 0 if legacy else _intact_after(data, offset)
            damage = Damage(path, offset, bad.reason, len(records), after)
            return Scan(tuple(records), offset, 0, damage, legacy)
        records.append((offset, record))
    return Scan(tuple(records), offset, 0, None, legacy)


def unframe(data: bytes) -> list[tuple[int, dict[str, object]]]:
    """The intact records of a journal's content, up to the first frame that is not."""
    return list(scan(data, Path("journal")).records)


@dataclass(frozen=True, slots=True)
class Loaded:
    """What :meth:`Journal.load` found: the snapshot and the records to replay."""

    snapshot: Snapshot | None  # None also for an empty one
    txid: int
    time: str | None
    records: tuple[dict[str, object], ...]
    legacy: bool = False  # written by an older version: rewrite it (compaction)


@dataclass(frozen=True, slots=True)
class Ticket:
    """Where a written frame ends, in which epoch (an epoch ends when the journal is cut back
    or emptied, which leaves everything before it durable)."""

    epoch: int
    end: int


class JournalBrokenError(OSError):
    """An fsync of the journal failed after its frames were applied: nothing later is durable
    (the kernel may have dropped the pages), so every later write is refused until restart."""


class Journal:
    """The snapshot and journal files of one datastore in the state directory."""

    def __init__(self, folder: Path, name: str, disk: Disk = REAL_DISK) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.snapshot_path = snapshot.path_in(folder, name)
        self.journal_path = folder / f"{name}.journal"
        self._disk = disk
        self._handle: IO[bytes] | None = None
        self._end: int | None = None  # where the next frame goes (the last intact one's end)
        self._last: int | None = None  # where the last appended frame starts
        self.journal_bytes = 0
        self.snapshot_bytes = 0
        # group commit: what is durable, who is syncing, and the epoch of the offsets
        self._synced_cv = threading.Condition(threading.Lock())
        self._synced = 0
        self._epoch = 0
        self._syncing = False
        self._broken: str | None = None
        self.fsyncs = 0  # how many fsyncs commits ran (group commit shares them)

    def load(self) -> Loaded:
        """Read the snapshot and the intact journal records after it; drop a torn tail.

        Raises:
            StateDamagedError: a file is damaged (the server must not start on it).
        """
        found = None
        if self.snapshot_path.exists():
            data = self.snapshot_path.read_bytes()
            self.snapshot_bytes = len(data)
            found = snapshot.decode(self.snapshot_path, data)
        txid = found.txid if found else 0
        data = self.journal_path.read_bytes() if self.journal_path.exists() else b""
        scanned = scan(data, self.journal_path)
        if scanned.damage is not None:
            raise StateDamagedError(scanned.damage)
        if scanned.torn:
            LOG.warning(
                "journal %s: dropped a torn last record at offset %d (%d bytes): a crash "
                "during its write, before it was acknowledged",
                self.journal_path,
                scanned.end,
                scanned.torn,
            )
            with self.journal_path.open("r+b") as handle:
                handle.truncate(scanned.end)
                os.fsync(handle.fileno())
        self.journal_bytes = self._end = scanned.end
        records = tuple(r for _, r in scanned.records if int(str(r["txid"])) > txid)
        legacy = scanned.legacy or (found is not None and not found.checked)
        return Loaded(
            found if found is not None and found.body else None,
            txid,
            found.time if found else None,
            records,
            legacy,
        )

    def append(self, record: dict[str, object]) -> None:
        """Append one record and fsync it: after this returns the commit is durable.

        On failure (a full disk, an I/O error) the journal is cut back to its last intact
        record, so that nothing of the failed commit stays; if even that fails, every later
        append first retries it and fails until it succeeds.
        """
        ticket = self.write(record)
        started = time.perf_counter()
        try:
            self._disk.sync(self._handle_or_open())
            JOURNAL_FSYNC.observe(time.perf_counter() - started)
        except OSError:
            self.retract()
            raise
        self._durable(ticket)

    def write(self, record: dict[str, object]) -> Ticket:
        """Write one record without fsync (the caller holds the core's lock); the commit is
        durable once :meth:`sync` of the ticket returns.

        On a failed write the journal is cut back to its last intact record (which also
        makes every earlier record durable) and the error raised.
        """
        if self._broken is not None:
            raise JournalBrokenError(self._broken)
        handle = self._handle_or_open()
        if self._end is None:
            self._end = handle.seek(0, os.SEEK_END)
        if handle.seek(0, os.SEEK_END) != self._end:
            self._cut_back(handle, self._end)
            self._new_epoch()
        data = frame(record)
        try:
            self._disk.write(handle, data)
        except OSError:
            with contextlib.suppress(OSError):
                self._cut_back(handle, self._end)
                self._new_epoch()
            raise
        self._last, self._end = self._end, self._end + len(data)
        self.journal_bytes = self._end
        return Ticket(self._epoch, self._end)

    def sync(self, ticket: Ticket) -> None:
        """Return once the frame of ``ticket`` is durable; run the fsync if nobody is.

        Called without the core's lock, so that the commits after this one are applied and
        written while it syncs, and share the next fsync.

        Raises:
            JournalBrokenError: the fsync failed (for this and every later commit).
        """
        with self._synced_cv:
            while True:
                if self._covered(ticket):
                    return
                if self._broken is not None:
                    raise JournalBrokenError(self._broken)
                if not self._syncing:
                    break
                self._synced_cv.wait()
            self._syncing = True
            epoch, target, handle = self._epoch, self._end or 0, self._handle
        started = time.perf_counter()
        try:
            if handle is not None:
                self._disk.sync(handle)
                JOURNAL_FSYNC.observe(time.perf_counter() - started)
            failure = None
        except OSError as exc:
            failure = exc
        with self._synced_cv:
            self._syncing = False
            self.fsyncs += 1
            if failure is not None:
                self._broken = (
                    f"journal {self.journal_path}: fsync failed ({failure}); the commits since "
                    "the last durable one may be lost: restart the server"
                )
                LOG.critical("%s", self._broken)
            elif epoch == self._epoch:
                self._synced = max(self._synced, target)
            self._synced_cv.notify_all()
            if failure is not None:
                raise JournalBrokenError(self._broken) from failure

    def _covered(self, ticket: Ticket) -> bool:
        return ticket.epoch < self._epoch or self._synced >= ticket.end

    def _durable(self, ticket: Ticket) -> None:
        with self._synced_cv:
            if ticket.epoch == self._epoch:
                self._synced = max(self._synced, ticket.end)

    def _new_epoch(self) -> None:
        """After a cut back (fsynced) or a new snapshot: all before is durable."""
        with self._synced_cv:
            self._epoch += 1
            self._synced = 0
            self._synced_cv.notify_all()

    def _handle_or_open(self) -> IO[bytes]:
        if self._handle is None:
            self._handle = self.journal_path.open("ab", buffering=0)  # no stale buffer
        return self._handle

    def retract(self) -> None:
        """Cut off the record the last :meth:`append` wrote (nothing acknowledged it yet)."""
        if self._handle is None or self._last is None or self._end is None:
            return
        self._end, self._last = self._last, None
        self.journal_bytes = self._end
        try:
            self._cut_back(self._handle, self._end)
            self._new_epoch()
        except OSError as exc:  # the next append cuts it before it writes
            LOG.error("journal %s: cannot take back a refused commit: %s", self.journal_path, exc)

    @staticmethod
    def _cut_back(handle: IO[bytes], end: int) -> None:
        handle.truncate(end)
        os.fsync(handle.fileno())

    def write_snapshot(
        self, document: str | bytes, txid: int, time: str, *, lyb_schema: str | None = None
    ) -> None:
        """Make ``document`` the snapshot at ``txid``, then empty the journal (with
        ``lyb_schema``: a LYB document printed with that schema, see :mod:`.snapshot`)."""
        data = snapshot.encode(document, txid, time, lyb_schema=lyb_schema)
        write_atomically(self.snapshot_path, data, self._disk)
        self.snapshot_bytes = len(data)
        with self._synced_cv:  # a leader's fsync must not meet a closed handle
            while self._syncing:
                self._synced_cv.wait()
            self.close()
        with self.journal_path.open("wb") as handle:
            os.fsync(handle.fileno())
        self._end = self.journal_bytes = 0
        self._last = None
        self._new_epoch()  # the snapshot holds every commit written so far

    @property
    def broken(self) -> bool:
        """Whether an fsync failed (nothing written since is durable)."""
        return self._broken is not None

    def due(self, minimum: int) -> bool:
        """Whether the journal has outgrown the snapshot (compaction is then amortised O(1))."""
        return self.journal_bytes > max(minimum, self.snapshot_bytes)

    def close(self) -> None:
        """Close the journal file."""
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
