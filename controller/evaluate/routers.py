"""The prefix-cache-aware routers people deploy, each as its authors describe it.

Every one of them routes over all instances of the fleet from one place (the C-PS's region);
none but GORGO prices the network. Sources and defaults are in docs/evaluation.md.

- ``sglang``: SGLang's cache-aware router (sgl-router, ``cache_aware`` policy): an
  approximate radix tree per worker of the prompts the router itself sent; its own count of
  running requests per worker; when (max - min) > balance_abs_threshold (32) and max >
  balance_rel_threshold (1.5) x min, the shortest queue; else the best prefix match if its
  match rate > cache_threshold (0.5), else the worker with the smallest tree.
- ``llm-d``: the llm-d inference scheduler (Gateway API inference extension endpoint picker)
  with its default profile: queue-scorer (weight 2, waiting requests scraped from the model
  servers every 50 ms), kv-cache-utilization-scorer (2) and prefix-cache-scorer (3, its own
  LRU index of the prefixes it routed), max-score-picker.
- ``dynamo``: NVIDIA Dynamo's KV router: overlap from the workers' KV events; cost =
  kv_overlap_score_weight (1) x prefill blocks (the router's active prompt work plus the
  uncached part of the request) + decode blocks (the active blocks it tracks); lowest cost,
  temperature 0.
- ``gorgo``: GORGO (arXiv 2602.11688), the ms-normalized cost of its centralized proxy:
  rtt_weight x RTT + prefill_rate x uncached tokens + queue_rate x queue_weight x queued
  tokens, with the instances' prefill rate as both rates and unit weights (the physically
  grounded point of the paper), uncached and queued tokens from the proxy's own tracking.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from controller.evaluate.cache import CacheMirror, PrefixCache
from controller.evaluate.engine import COMPLETE, FIRST_TOKEN, Decision, RunSettings, World
from controller.evaluate.reporting import ChannelSpec, stale
from controller.evaluate.server import Job, cached_tokens
from controller.evaluate.trace import Request

METRICS = "metrics"
_TREE_BLOCKS = 2**24 // 512  # max_tree_size nodes of characters, in 512-token blocks


class _Tracking:
    """What a router knows of its own requests: per instance, the prompts it sent (an LRU
    index), requests in flight, prompt tokens not yet prefilled, blocks not yet complete."""

    def __init__(self, instances: int, capacity: int) -> None:
        self.index = [PrefixCache(capacity) for _ in range(instances)]
        self.running = [0] * instances
        self.prompt = [0] * instances
        self.blocks = [0] * instances
        self.expected: dict[int, int] = {}

    def sent(self, instance: int, request: Request, uncached: int, now: float) -> None:
        self.index[instance].insert(request.blocks, now)
        self.running[instance] += 1
        self.prompt[instance] += uncached
        self.blocks[instance] += len(request.blocks)
        self.expected[request.index] = uncached

    def seen(self, event: int, job: Job, instance: int) -> None:
        if event == FIRST_TOKEN:
            self.prompt[instance] -= self.expected.get(job.request.index, 0)
        elif event == COMPLETE:
            self.running[instance] -= 1
            self.blocks[instance] -= len(job.request.blocks)
            self.expected.pop(job.request.index, None)


class SGLang:
    """sgl-router's cache_aware policy with its defaults."""

    name = "sglang"

    def __init__(self, cache_threshold: float = 0.5, abs_threshold: int = 32) -> None:
        self.cache_threshold = cache_threshold
        self.abs_threshold = abs_threshold
        self.rel_threshold = 1.5
        self._own: _Tracking | None = None

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return ()

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        own = self._own = self._own or _Tracking(len(world.servers), _TREE_BLOCKS)
        loads = own.running
        high, low = max(loads), min(loads)
        if high - low > self.abs_threshold and high > self.rel_threshold * low:
            chosen = loads.index(low)
        else:
            matches = [tree.prefix(request.blocks) for tree in own.index]
            best = max(matches)
            rate = cached_tokens(request, best, world.topology.block_tokens) / request.input_tokens
            if best and rate > self.cache_threshold:
                chosen = matches.index(best)
            else:
                sizes = [len(tree.blocks) for tree in own.index]
                chosen = sizes.index(min(sizes))
        own.sent(chosen, request, 0, world.now)
        return Decision(chosen)

    def observe(self, event: int, job: Job, world: World) -> None:
        if self._own is not None:
            self._own.seen(event, job, job.instance)


class LlmD:
    """The llm-d endpoint picker's default scorers and weights."""

    name = "llm-d"

    def __init__(self, seed: int = 7) -> None:
        self._own: _Tracking | None = None
        self._random = random.Random(seed)

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return (ChannelSpec(METRICS, 0.05, settings.processing),)

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        count = len(world.servers)
        own = self._own = self._own or _Tracking(count, world.servers[0].instance.spec.kv_blocks)
        held = [world.held(METRICS, i) for i in range(count)]
        queues = [0 if h is None else h.queued for h in held]
        high, low = max(queues), min(queues)
        scores = []
        for index in range(count):
            queue = 1.0 if high == low else (high - queues[index]) / (high - low)
            sample = held[index]
            kv = 1.0 - (0.0 if sample is None else sample.kv_usage)
            prefix = own.index[index].prefix(request.blocks) / len(request.blocks)
            scores.append(2 * queue + 2 * kv + 3 * prefix)
        best = max(scores)
        chosen = self._random.choice([i for i, s in enumerate(scores) if s == best])
        own.sent(chosen, request, 0, world.now)
        return Decision(chosen, stale=stale(held[chosen], world.now, 0.05))

    def observe(self, event: int, job: Job, world: World) -> None:
        if self._own is not None:
            self._own.seen(event, job, job.instance)


class Dynamo:
    """Dynamo's KV router cost with its default overlap weight and temperature."""

    name = "dynamo"

    def __init__(self, overlap_weight: float = 1.0) -> None:
        self.overlap_weight = overlap_weight
        self._own: _Tracking | None = None
        self._events: list[CacheMirror] = []

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return ()

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        topology = world.topology
        if self._own is None:
            self._own = _Tracking(len(world.servers), 1)
            self._events = world.mirrors()
        own = self._own
        size = topology.block_tokens
        best, best_cost, best_uncached = 0, float("inf"), 0
        for server in world.servers:
            index = server.instance.index
            mirror = self._events[index]
            delay = topology.rtt(server.instance.region, topology.cps_region) / 2
            mirror.advance(world.now - delay - world.settings.processing)
            overlap = mirror.prefix(request.blocks)
            uncached = request.input_tokens - cached_tokens(request, overlap, size)
            prefill = (own.prompt[index] + uncached) / size
            decode = own.blocks[index] + len(request.blocks)
            cost = self.overlap_weight * prefill + decode
            if cost < best_cost:
                best, best_cost, best_uncached = index, cost, uncached
        own.sent(best, request, best_uncached, world.now)
        return Decision(best)

    def observe(self, event: int, job: Job, world: World) -> None:
        if self._own is not None:
            self._own.seen(event, job, job.instance)


class Gorgo:
    """GORGO's centralized proxy with the physically grounded cost."""

    name = "gorgo"

    def __init__(self, rtt_weight: float = 1.0, queue_weight: float = 1.0) -> None:
        self.rtt_weight = rtt_weight
        self.queue_weight = queue_weight
        self._own: _Tracking | None = None

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return ()

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        own = self._own = self._own or _Tracking(
            len(world.servers), world.servers[0].instance.spec.kv_blocks
        )
        size = world.topology.block_tokens
        best, best_cost, best_uncached = 0, float("inf"), 0
        for server in world.servers:
            index = server.instance.index
            rate = 1000.0 / server.instance.spec.prefill_rate  # ms per token
            cached = cached_tokens(request, own.index[index].prefix(request.blocks), size)
            uncached = request.input_tokens - cached
            cost = (
                self.rtt_weight * world.rtt[ingress][index] * 1000.0
                + rate * uncached
                + rate * self.queue_weight * own.prompt[index]
            )
            if cost < best_cost:
                best, best_cost, best_uncached = index, cost, uncached
        own.sent(best, request, best_uncached, world.now)
        return Decision(best)

    def observe(self, event: int, job: Job, world: World) -> None:
        if self._own is not None:
            self._own.seen(event, job, job.instance)
