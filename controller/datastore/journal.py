"""Crash-safe persistence of a datastore: a snapshot plus an append-only journal.

* The snapshot is the whole tree printed as RFC 7951 JSON after a one-line JSON header
  (``{"txid": N, "time": ...}``). It is written to a temporary file, fsynced, renamed over the
  old one with :func:`os.replace` and the folder is fsynced, so a reader finds either the old or
  the new snapshot, never half of one.
* Each committed transaction is appended to the journal as one frame, ``length`` (4 bytes, big
  endian) + ``crc32`` (4 bytes) + the record (JSON), and fsynced before the edit is
  acknowledged. At load a frame that is short or fails its checksum is a torn tail from a crash
  mid-write: it and anything after it are dropped (and truncated away).
* Compaction writes a new snapshot and empties the journal; records whose ``txid`` the snapshot
  already holds are skipped at load, so a crash between the two steps loses nothing.
"""

from __future__ import annotations

import json
import os
import struct
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from controller.observability.metrics import JOURNAL_FSYNC

_FRAME = struct.Struct(">II")


@dataclass(frozen=True, slots=True)
class Loaded:
    """What :meth:`Journal.load` found: the snapshot text and the records to replay."""

    snapshot: str | None
    txid: int
    time: str | None
    records: tuple[dict[str, object], ...]


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``: temp file, fsync, rename, fsync the folder."""
    temp = path.with_name(path.name + ".tmp")
    with temp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
    fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Make a rename in a folder durable."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def frame(record: dict[str, object]) -> bytes:
    """One journal frame."""
    payload = json.dumps(record, separators=(",", ":")).encode()
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def unframe(data: bytes) -> Iterator[tuple[int, dict[str, object]]]:
    """The intact records of a journal and the offset after each; stops at a torn frame."""
    offset = 0
    while offset + _FRAME.size <= len(data):
        length, crc = _FRAME.unpack_from(data, offset)
        start = offset + _FRAME.size
        payload = data[start : start + length]
        if len(payload) < length or zlib.crc32(payload) != crc:
            return
        try:
            record = json.loads(payload)
        except ValueError:
            return
        offset = start + length
        yield offset, record


class Journal:
    """The snapshot and journal files of one datastore in the state directory."""

    def __init__(self, folder: Path, name: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.snapshot_path = folder / f"{name}.json"
        self.journal_path = folder / f"{name}.journal"
        self._handle: IO[bytes] | None = None
        self.journal_bytes = 0
        self.snapshot_bytes = 0

    def load(self) -> Loaded:
        """Read the snapshot and the intact journal records after it; drop a torn tail."""
        snapshot, txid, time = None, 0, None
        if self.snapshot_path.exists():
            text = self.snapshot_path.read_text()
            self.snapshot_bytes = len(text)
            header, _, snapshot = text.partition("\n")
            meta = json.loads(header)
            txid, time = int(meta["txid"]), meta.get("time")
        records: list[dict[str, object]] = []
        data = self.journal_path.read_bytes() if self.journal_path.exists() else b""
        end = 0
        for end, record in unframe(data):  # noqa: B007 - the offset after the last good frame
            if int(str(record["txid"])) > txid:
                records.append(record)
        if end < len(data):
            with self.journal_path.open("r+b") as handle:
                handle.truncate(end)
                os.fsync(handle.fileno())
        self.journal_bytes = end
        return Loaded(snapshot or None, txid, time, tuple(records))

    def append(self, record: dict[str, object]) -> None:
        """Append one record and fsync it: after this returns the commit is durable."""
        if self._handle is None:
            self._handle = self.journal_path.open("ab")
        data = frame(record)
        position = self._handle.tell()
        started = time.perf_counter()
        try:
            self._handle.write(data)
            self._handle.flush()
            os.fsync(self._handle.fileno())
            JOURNAL_FSYNC.observe(time.perf_counter() - started)
        except OSError:
            self._handle.truncate(position)
            raise
        self.journal_bytes += len(data)

    def write_snapshot(self, document: str, txid: int, time: str) -> None:
        """Make ``document`` the snapshot at ``txid``, then empty the journal."""
        header = json.dumps({"txid": txid, "time": time})
        data = f"{header}\n{document}".encode()
        write_atomically(self.snapshot_path, data)
        self.snapshot_bytes = len(data)
        self.close()
        with self.journal_path.open("wb") as handle:
            os.fsync(handle.fileno())
        self.journal_bytes = 0

    def due(self, minimum: int) -> bool:
        """Whether the journal has outgrown the snapshot (compaction is then amortised O(1))."""
        return self.journal_bytes > max(minimum, self.snapshot_bytes)

    def close(self) -> None:
        """Close the journal file."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
