"""``yang:date-and-time`` (RFC 6991 3) to and from Unix seconds, as every agent writes it."""

from __future__ import annotations

from datetime import UTC, datetime


def epoch(text: str) -> float:
    """A ``yang:date-and-time`` as Unix seconds."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def date_and_time(at: float) -> str:
    """Unix seconds as ``yang:date-and-time`` in UTC, to the millisecond."""
    text = datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")
