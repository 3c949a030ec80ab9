"""The prefill model of an LLM serving instance, for the closed-loop check of
``catsctl evaluate`` (tools/closed_loop): the same model as the simulator's instances.

A request names its prompt's blocks (``hash_ids``) and length (``input_length``). Prefills run
one at a time in arrival order at ``rate`` prompt tokens per second, over the tokens after the
longest prefix already cached (at least one token); then the prompt's blocks enter the
instance's LRU of ``kv_blocks`` blocks (:class:`controller.evaluate.cache.PrefixCache`). The
answer comes when the prefill ends: its time is the request's time to first token here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from controller.evaluate.cache import PrefixCache


@dataclass(frozen=True, slots=True)
class PrefillSettings:
    """Prompt tokens per second, the KV cache in blocks, tokens per block."""

    rate: float
    kv_blocks: int
    block_tokens: int = 512


@dataclass(frozen=True, slots=True)
class Prefilled:
    """What one request took: its wait for the engine, its prefill, the tokens reused."""

    waited: float
    prefill: float
    cached_tokens: int

    def as_json(self) -> dict[str, Any]:
        """The answer's body members."""
        return {
            "wait-ms": round(self.waited * 1000, 3),
            "prefill-ms": round(self.prefill * 1000, 3),
            "cached-tokens": self.cached_tokens,
        }


def prompt(document: Any) -> tuple[tuple[int, ...], int]:
    """The blocks and length of a request body.

    Raises:
        ValueError: when ``hash_ids`` is not a non-empty list of integers or ``input_length``
            not a positive integer.
    """
    if not isinstance(document, dict):
        raise ValueError("the body is a JSON object with hash_ids and input_length")
    blocks = document.get("hash_ids")
    length = document.get("input_length")
    if not isinstance(blocks, list) or not blocks or not all(type(b) is int for b in blocks):
        raise ValueError("hash_ids: expected a non-empty list of integers")
    if type(length) is not int or length < 1:
        raise ValueError("input_length: expected a positive integer")
    return tuple(blocks), length


class PrefillEngine:
    """One prefill at a time, in arrival order, with a prefix cache."""

    def __init__(self, settings: PrefillSettings) -> None:
        self.settings = settings
        self.cache = PrefixCache(settings.kv_blocks)
        self._turn = threading.Condition()
        self._issued = 0
        self._serving = 0

    def cached_tokens(self, blocks: Sequence[int], length: int) -> int:
        """Prompt tokens the cache covers now (all but one when every block is cached)."""
        held = self.cache.prefix(blocks)
        if held >= len(blocks):
            return length - 1
        return min(length - 1, held * self.settings.block_tokens)

    def serve(self, blocks: Sequence[int], length: int) -> Prefilled:
        """Wait for this request's turn, prefill what is not cached, cache the prompt."""
        arrived = time.perf_counter()
        with self._turn:
            ticket = self._issued
            self._issued += 1
            while self._serving != ticket:
                self._turn.wait()
            cached = self.cached_tokens(blocks, length)
        started = time.perf_counter()
        took = (length - cached) / self.settings.rate
        time.sleep(took)
        with self._turn:
            self.cache.insert(blocks, time.monotonic())
            self._serving += 1
            self._turn.notify_all()
        return Prefilled(started - arrived, time.perf_counter() - started, cached)
