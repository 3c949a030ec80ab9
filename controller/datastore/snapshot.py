"""The snapshot file of a datastore: the whole tree as RFC 7951 JSON under a checksummed header.

The first line is a JSON header ``{"txid": N, "time": T, "length": L, "crc32": C}``; the rest
is the document, ``L`` bytes. ``C`` is the CRC-32 of the header's other members (printed
canonically) and the document, so a changed digit anywhere, in the transaction id as in the
data, is found at load. A snapshot is written atomically (temp file, fsync, rename), so a crash
leaves the old one or the new one: any mismatch is damage, never a torn write. A snapshot of
an older version (a header without ``crc32``) is read, with a warning, and replaced by the
next compaction.
"""

from __future__ import annotations

import json
import logging
import zlib
from dataclasses import dataclass
from pathlib import Path

from controller.datastore.damage import Damage, StateDamagedError

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot as read: its document and the transaction it holds."""

    document: str
    txid: int
    time: str | None
    checked: bool  # False for a snapshot of an older version, without a checksum


def _canonical(txid: int, time: str, length: int) -> bytes:
    return json.dumps(
        {"length": length, "time": time, "txid": txid}, separators=(",", ":"), sort_keys=True
    ).encode()


def encode(document: str, txid: int, time: str) -> bytes:
    """The file content of a snapshot."""
    body = document.encode()
    crc = zlib.crc32(_canonical(txid, time, len(body)) + b"\n" + body)
    header = json.dumps({"txid": txid, "time": time, "length": len(body), "crc32": crc})
    return header.encode() + b"\n" + body


def decode(path: Path, data: bytes) -> Snapshot:
    """The snapshot in ``data`` (the content of ``path``).

    Raises:
        StateDamagedError: the header is unreadable or the checksum does not match.
    """
    head, newline, body = data.partition(b"\n")
    try:
        header = json.loads(head)
        txid = int(header["txid"])
        time = header.get("time")
    except (ValueError, TypeError, KeyError) as exc:
        raise StateDamagedError(Damage(path, 0, f"unreadable snapshot header: {exc}")) from None
    if isinstance(header, dict) and set(header) == {"txid", "time"}:
        LOG.warning("snapshot %s has no checksum (an older version wrote it)", path)
        return Snapshot(body.decode(errors="replace"), txid, time, checked=False)
    length = header.get("length")
    if "crc32" not in header:
        raise StateDamagedError(Damage(path, 0, "the snapshot header has no checksum"))
    if not newline or length != len(body):
        raise StateDamagedError(
            Damage(path, len(head) + 1, f"the snapshot holds {len(body)} bytes, not {length}")
        )
    crc = zlib.crc32(_canonical(txid, str(time), len(body)) + b"\n" + body)
    if crc != header["crc32"]:
        raise StateDamagedError(
            Damage(path, 0, "checksum mismatch: the snapshot was changed or damaged")
        )
    try:
        document = body.decode()
    except UnicodeDecodeError as exc:
        raise StateDamagedError(Damage(path, len(head) + 1 + exc.start, str(exc))) from None
    return Snapshot(document, txid, time, checked=True)
