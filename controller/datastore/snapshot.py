"""The snapshot file of a datastore: the whole tree under a checksummed header.

The first line is a JSON header ``{"txid": N, "time": T, "length": L, "crc32": C}``; the rest
is the document, ``L`` bytes. ``C`` is the CRC-32 of the header's other members (printed
canonically) and the document, so a changed digit anywhere, in the transaction id as in the
data, is found at load. A snapshot is written atomically (temp file, fsync, rename), so a crash
leaves the old one or the new one: any mismatch is damage, never a torn write. A snapshot of
an older version (a header without ``crc32``) is read, with a warning, and replaced by the
next compaction.

The document is RFC 7951 JSON, or, when the header says ``"format": "lyb"``, libyang's binary
format (LYB), which keeps the default nodes and node flags of a validated tree, with the
``schema`` fingerprint of the modules it was printed with (:func:`fingerprint`): a tree
loaded from a LYB snapshot of the same schema and no journal after it is the validated tree
that was printed, so a start-up needs no whole-tree validation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from controller.datastore.damage import Damage, StateDamagedError

LOG = logging.getLogger(__name__)
JSON = "json"
LYB = "lyb"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot as read: its document and the transaction it holds."""

    body: bytes | memoryview  # a view of the file's content (no copy of a large document)
    txid: int
    time: str | None
    checked: bool  # False for a snapshot of an older version, without a checksum
    format: str = JSON
    schema: str | None = None  # the fingerprint of the schema a LYB document was printed with

    @property
    def document(self) -> str:
        """The document as text (a JSON snapshot)."""
        return bytes(self.body).decode(errors="replace")


def path_in(folder: Path, name: str) -> Path:
    """Where the snapshot of datastore ``name`` is kept in the state directory ``folder``."""
    return folder / f"{name}.json"


def fingerprint(modules: Iterable[object], libyang: str) -> str:
    """A digest of what a LYB document depends on: every module (name, revision, features,
    implemented) and the libyang version that prints and parses it."""
    text = json.dumps([repr(module) for module in modules] + [libyang])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _canonical(members: dict[str, object]) -> bytes:
    return json.dumps(members, separators=(",", ":"), sort_keys=True).encode()


def encode(document: str | bytes, txid: int, time: str, *, lyb_schema: str | None = None) -> bytes:
    """The file content of a snapshot (with ``lyb_schema``: a LYB document of that schema)."""
    body = document.encode() if isinstance(document, str) else document
    members: dict[str, object] = {"txid": txid, "time": time, "length": len(body)}
    if lyb_schema is not None:
        members |= {"format": LYB, "schema": lyb_schema}
    crc = zlib.crc32(_canonical(members) + b"\n" + body)
    return json.dumps({**members, "crc32": crc}).encode() + b"\n" + body


def decode(path: Path, data: bytes) -> Snapshot:
    """The snapshot in ``data`` (the content of ``path``).

    Raises:
        StateDamagedError: the header is unreadable or the checksum does not match.
    """
    cut = data.find(b"\n")
    newline = cut >= 0
    head = data[:cut] if newline else data
    body = memoryview(data)[cut + 1 :] if newline else memoryview(b"")
    try:
        header = json.loads(head)
        txid = int(header["txid"])
        time = header.get("time")
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise StateDamagedError(Damage(path, 0, f"unreadable snapshot header: {exc}")) from None
    if isinstance(header, dict) and set(header) == {"txid", "time"}:
        LOG.warning("snapshot %s has no checksum (an older version wrote it)", path)
        return Snapshot(body, txid, time, checked=False)
    length = header.get("length")
    if "crc32" not in header:
        raise StateDamagedError(Damage(path, 0, "the snapshot header has no checksum"))
    if not newline or length != len(body):
        raise StateDamagedError(
            Damage(path, len(head) + 1, f"the snapshot holds {len(body)} bytes, not {length}")
        )
    members = {key: value for key, value in header.items() if key != "crc32"}
    if zlib.crc32(body, zlib.crc32(_canonical(members) + b"\n")) != header["crc32"]:
        raise StateDamagedError(
            Damage(path, 0, "checksum mismatch: the snapshot was changed or damaged")
        )
    fmt = header.get("format", JSON)
    if fmt == LYB:
        return Snapshot(
            body, txid, time, checked=True, format=LYB, schema=str(header.get("schema"))
        )
    if fmt != JSON:
        raise StateDamagedError(Damage(path, 0, f"unknown snapshot format {fmt!r}"))
    try:
        str(body, "utf-8")
    except UnicodeDecodeError as exc:
        raise StateDamagedError(Damage(path, len(head) + 1 + exc.start, str(exc))) from None
    return Snapshot(body, txid, time, checked=True)
