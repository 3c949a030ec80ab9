"""RFC 7951 values of ietf-cats-agent-selection to the mapping core's units, and back.

Times travel as milliseconds (decimal64 strings) and are seconds in the core; instants are
``yang:date-and-time`` and epoch seconds in the core; identityref values carry the module
prefix on the wire and are enum values in the core (agent draft 7.4, M48).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from controller.selection.mapping import Metadata
from controller.selection.mapping.vocabulary import Confidence
from controller.types import Json, SourceId

MODULE = "ietf-cats-agent-selection"


def ident(value: object) -> str:
    """An identityref value without its module prefix."""
    text = str(value)
    return text.split(":", 1)[1] if ":" in text else text


def qualified(name: str) -> str:
    """An identity of ietf-cats-agent-selection as RFC 7951 writes it."""
    return f"{MODULE}:{name}"


def number(value: object) -> float | None:
    """A decimal64 / integer member as a float (None when absent)."""
    return None if value is None else float(str(value))


def integer(value: object) -> int | None:
    """An integer member (uint64 travels as a string)."""
    return None if value is None else int(str(value))


def seconds(milliseconds: object) -> float | None:
    """A ``milliseconds`` member in seconds."""
    found = number(milliseconds)
    return None if found is None else found / 1000.0


def instant(text: object) -> float | None:
    """A ``yang:date-and-time`` as epoch seconds."""
    if text is None:
        return None
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()


def date_and_time(epoch: float) -> str:
    """Epoch seconds as ``yang:date-and-time`` (UTC, milliseconds)."""
    moment = datetime.fromtimestamp(epoch, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def ms(value: float) -> str:
    """Seconds as a ``cats-t:milliseconds`` decimal64 (3 fraction digits, never negative)."""
    return f"{max(value, 0.0) * 1000.0:.3f}"


def decimal(value: float, digits: int = 6) -> str:
    """A decimal64 with ``digits`` fraction digits."""
    return f"{value:.{digits}f}"


def metadata(group: Mapping[str, Any]) -> Metadata:
    """collected-at, freshness-bound, source and confidence of a group (7.4, M41)."""
    source = group.get("source")
    confidence = group.get("confidence")
    return Metadata(
        instant(group.get("collected-at")),
        seconds(group.get("freshness-bound")),
        None if source is None else SourceId(str(source)),
        Confidence(str(confidence)) if confidence is not None else Confidence.ASSERTED,
    )


def metadata_json(meta: Metadata) -> Json:
    """The metadata members of a group."""
    found: Json = {}
    if meta.collected_at is not None:
        found["collected-at"] = date_and_time(meta.collected_at)
    if meta.freshness_bound is not None:
        found["freshness-bound"] = ms(meta.freshness_bound)
    if meta.source is not None:
        found["source"] = meta.source
    found["confidence"] = meta.confidence.value
    return found
