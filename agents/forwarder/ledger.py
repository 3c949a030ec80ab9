"""When the forwarder first accepted each entry's content, kept across restarts.

An entry without ``installed-at`` has its lifetime counted from that moment (ietf-cats-steering
grouping ``expiry``), so a restart must not restart it. The file ``accepted.json`` in the
state directory is rewritten (temporary file, fsync, rename) whenever the times change.
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


def _name(key: EntryKey) -> str:
    return f"{key.kind.value}|{key.name}"


def load(state_dir: Path) -> dict[EntryKey, Accepted]:
    """The times saved in a state directory (none when the file is missing or unreadable)."""
    path = state_dir / FILE_NAME
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        LOG.warning("%s ignored: %s", path, exc)
        return {}
    found: dict[EntryKey, Accepted] = {}
    for name, (fingerprint, at) in saved.items():
        kind, _, key = str(name).partition("|")
        found[EntryKey(Kind(kind), key)] = Accepted(str(fingerprint), float(at))
    return found


def save(state_dir: Path, accepted: Mapping[EntryKey, Accepted]) -> None:
    """Write the times (atomically)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / FILE_NAME
    temporary = path.with_suffix(".tmp")
    document = {_name(k): [a.fingerprint, a.at] for k, a in accepted.items()}
    with temporary.open("w", encoding="utf-8") as sink:
        json.dump(document, sink, separators=(",", ":"))
        sink.flush()
        os.fsync(sink.fileno())
    temporary.replace(path)
