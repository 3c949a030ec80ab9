"""The report-sender ledger on disk, so replay protection survives a restart (9).

The C-PS keeps, per authenticated sender, the last accepted sequence number and the counters
(``report-senders``). The ledger is written behind the reports: the sweeper writes it at most
once a second when it changed, and :meth:`ServiceMetrics.close` writes it at shutdown. Each
write replaces the file atomically (temporary file, fsync, rename, fsync of the folder), so a
crash leaves the previous or the new ledger, never half of one. After a crash the reports
accepted in the last second before it are not protected against a replay; after a clean stop
every report is.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from controller.datastore.files import write_atomically
from controller.service_metrics.ingest import SenderRecord

LOG = logging.getLogger("catsctl.cps")

FILE_NAME = "cps-report-senders.json"
VERSION = 1
_FIELDS = frozenset(f.name for f in fields(SenderRecord))


def encode(senders: Mapping[str, SenderRecord]) -> bytes:
    """The ledger document: a version and one object per sender."""
    document = {"version": VERSION, "senders": [asdict(r) for r in senders.values()]}
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def decode(data: bytes) -> dict[str, SenderRecord]:
    """The senders of a ledger document; unknown fields (a newer version) are ignored."""
    document: Any = json.loads(data)
    if not isinstance(document, dict) or document.get("version") != VERSION:
        raise ValueError(f"not a version {VERSION} report-sender ledger")
    records = (
        SenderRecord(**{k: v for k, v in item.items() if k in _FIELDS})
        for item in document["senders"]
    )
    return {record.source: record for record in records}


class LedgerFile:
    """The ledger in a state directory (``None``: kept in memory only)."""

    def __init__(self, state_dir: Path | None) -> None:
        self.path = None if state_dir is None else state_dir / FILE_NAME

    def load(self) -> dict[str, SenderRecord]:
        """The persisted senders; empty when there is no ledger yet.

        A ledger that cannot be read is logged and set aside (renamed ``*.corrupt``), so the
        operator sees that replay protection restarted from nothing.
        """
        if self.path is None or not self.path.exists():
            return {}
        try:
            return decode(self.path.read_bytes())
        except (OSError, ValueError, TypeError, KeyError) as exc:
            LOG.error("report-sender ledger %s unreadable, starting empty: %s", self.path, exc)
            self.path.replace(self.path.with_name(self.path.name + ".corrupt"))
            return {}

    def save(self, senders: Mapping[str, SenderRecord]) -> None:
        """Replace the ledger atomically with ``senders``."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, encode(senders))
