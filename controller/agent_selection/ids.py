"""The identifiers the C-PS derives from a session id, each fitted to its YANG type (6.5, P8, P9).

A session id may be 255 characters (ietf-cats-types ``session-id``); the identifiers built on
it are at most 128: ``commitment-id``, ``decision-id`` (ietf-cats-types), ``handoff-id``,
``reservation-id`` and the commitment's ``steering-instruction-id`` (ietf-cats-agent-selection).
Each is the readable ``<head><session-id><tail>`` while that is shorter than the bound, else
``<head><prefix of the session id>~<digest><tail>`` of exactly the bound, the digest being the
first 20 hex digits of SHA-256 of the whole session id. So every derived id fits its type, is a
function of the session id and the number it carries (stable across retries: a repeated
instruction or reservation maps to the same id, which is what makes them idempotent, M43), and
two sessions never share one: readable ids are injective (the tail is a number), readable and
shortened ids differ in length, and two shortened ids differ in their digests.
"""

from __future__ import annotations

import hashlib

from controller.types import CommitmentId, SessionId

#: The bound of every derived id (``length "1..128"`` of the types above).
MAX_ID = 128
#: Hex digits of the session id's digest in a shortened id (80 bits).
DIGEST_CHARS = 20


def fitted(head: str, session_id: SessionId, tail: str, limit: int = MAX_ID) -> str:
    """``<head><session-id><tail>`` when shorter than ``limit``, else the same with the session
    id cut to a prefix and its digest, ``limit`` characters long."""
    readable = f"{head}{session_id}{tail}"
    if len(readable) < limit:
        return readable
    digest = hashlib.sha256(session_id.encode()).hexdigest()[:DIGEST_CHARS]
    room = limit - len(head) - len(tail) - len(digest) - 1
    if room < 0:
        raise ValueError(f"{head!r} and {tail!r} leave no room in {limit} characters")
    return f"{head}{session_id[:room]}~{digest}{tail}"


def commitment_id(session_id: SessionId, number: int) -> CommitmentId:
    """The session's ``number``-th commitment (P8): ``cm-<session-id>-<number>``."""
    return CommitmentId(fitted("cm-", session_id, f"-{number}"))


def instruction_id(session_id: SessionId, number: int) -> str:
    """The steering instruction (MSG-10) of that commitment: ``si-cm-<session-id>-<number>``."""
    return fitted("si-cm-", session_id, f"-{number}")


def handoff_id(session_id: SessionId, record_id: int) -> str:
    """The handoff started by decision record ``record_id`` (P9): ``ho-<session-id>-<record>``."""
    return fitted("ho-", session_id, f"-{record_id}")


def reservation_id(session_id: SessionId, record_id: int) -> str:
    """The reservation of that handoff (MSG-11): ``rsv-ho-<session-id>-<record>``."""
    return fitted("rsv-ho-", session_id, f"-{record_id}")


def decision_id(session_id: SessionId, record_id: int) -> str:
    """A decision record as a ``decision-id`` (M8): ``<session-id>/<record-id>``."""
    return fitted("", session_id, f"/{record_id}")
