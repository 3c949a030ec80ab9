"""Request traces in Mooncake's JSONL format, and their scaling to a load level.

One JSON object a line: ``timestamp`` (ms from the start), ``input_length``,
``output_length`` and ``hash_ids`` (the prompt's blocks of ``block_tokens`` tokens, as hashes;
requests that share a prefix share its leading ids). The trace names no conversations: a
request's conversation is its first block (the turns of one conversation, and the requests
that share a system prompt, start with the same block), and a conversation keeps its
ingress.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from controller.evaluate.errors import invalid
from controller.evaluate.shipped import DEFAULT_TRACE


@dataclass(frozen=True, slots=True)
class Request:
    """One request: arrival (s), prompt and output tokens, prompt blocks, conversation."""

    index: int
    arrival: float
    input_tokens: int
    output_tokens: int
    blocks: tuple[int, ...]
    conversation: int

    def block_tokens(self, position: int, block_tokens: int) -> int:
        """The tokens of the block at ``position`` (the last one may be partial)."""
        if position < len(self.blocks) - 1:
            return block_tokens
        return max(1, self.input_tokens - block_tokens * (len(self.blocks) - 1))


def _field(doc: object, name: str, where: str) -> int:
    if not isinstance(doc, dict):
        raise invalid("expected a JSON object", where)
    value = doc.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise invalid(f"{name}: expected an integer >= 0", where)
    return value


def parse(lines: Iterable[str], source: str = "trace") -> tuple[Request, ...]:
    """Requests from Mooncake JSONL lines, in arrival order (blank lines are skipped)."""
    requests: list[Request] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise invalid(f"not JSON: {exc.msg}", where) from exc
        ids = doc.get("hash_ids") if isinstance(doc, dict) else None
        if not isinstance(ids, list) or not ids or not all(isinstance(i, int) for i in ids):
            raise invalid("hash_ids: expected a non-empty list of integers", where)
        stamp = _field(doc, "timestamp", where)
        requests.append(
            Request(
                len(requests),
                stamp / 1000.0,
                max(1, _field(doc, "input_length", where)),
                _field(doc, "output_length", where),
                tuple(ids),
                ids[0],
            )
        )
    requests.sort(key=lambda r: (r.arrival, r.index))
    return tuple(replace(r, index=i) for i, r in enumerate(requests))


def load(path: Path = DEFAULT_TRACE) -> tuple[Request, ...]:
    """Read a trace file."""
    with path.open(encoding="utf-8") as lines:
        return parse(lines, path.name)


def duration(requests: Sequence[Request]) -> float:
    """Seconds from the first arrival to the last (at least one second)."""
    if not requests:
        return 1.0
    return max(1.0, requests[-1].arrival - requests[0].arrival)


def offered_tokens_per_s(requests: Sequence[Request]) -> float:
    """The prompt tokens per second the trace offers, as if nothing were cached."""
    return sum(r.input_tokens for r in requests) / duration(requests)


def scaled(requests: Sequence[Request], factor: float) -> tuple[Request, ...]:
    """The same requests with arrivals compressed by ``factor`` (2.0: twice the rate)."""
    if factor <= 0:
        raise ValueError("the scale factor must be positive")
    start = requests[0].arrival if requests else 0.0
    return tuple(replace(r, arrival=(r.arrival - start) / factor) for r in requests)


def at_load(requests: Sequence[Request], load: float, capacity: float) -> tuple[Request, ...]:
    """Arrivals scaled so that the offered prompt tokens are ``load`` of ``capacity``
    (prompt tokens per second of the whole topology)."""
    return scaled(requests, load * capacity / offered_tokens_per_s(requests))


def window(requests: Sequence[Request], start: float, length: float) -> tuple[Request, ...]:
    """The requests arriving in [start, start + length), re-based to arrive from 0."""
    kept = [r for r in requests if start <= r.arrival < start + length]
    return tuple(replace(r, index=i, arrival=r.arrival - start) for i, r in enumerate(kept))


def pick(key: int, seed: int, shares: Sequence[float]) -> int:
    """A reproducible choice of an index by ``shares`` for ``key`` (a conversation)."""
    digest = hashlib.blake2b(f"{seed}:{key}".encode(), digest_size=8).digest()
    point = int.from_bytes(digest, "big") / 2**64 * sum(shares)
    for index, share in enumerate(shares):
        point -= share
        if point < 0:
            return index
    return len(shares) - 1
