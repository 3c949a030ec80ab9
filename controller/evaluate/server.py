"""A serving instance: a FIFO prefill engine with a batch limit and a prefix KV cache.

Prefill is compute-bound and runs one request at a time at the instance's prefill rate; only
the prompt tokens after the longest cached prefix are computed (at least one token, as
engines recompute the last one). A request holds a batch slot from the start of its prefill
to the end of its decode (output tokens at the per-sequence decode rate); a request waits for
a slot when the batch is full. TTFT at the instance is its wait plus its prefill.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field

from controller.evaluate.cache import CacheLog, PrefixCache
from controller.evaluate.topology import Instance
from controller.evaluate.trace import Request


@dataclass(slots=True)
class Job:
    """A request on its way to, or at, an instance."""

    request: Request
    ingress: int
    instance: int
    decided_at: float
    rtt: float
    arrived: float
    ready: float
    fetched: int = 0
    cached: int = 0
    start: float = 0.0
    end: float = 0.0


def cached_tokens(request: Request, blocks: int, block_tokens: int) -> int:
    """Prompt tokens covered by the first ``blocks`` blocks (all but one token when every
    block is cached: the last token is always computed)."""
    if blocks >= len(request.blocks):
        return request.input_tokens - 1
    return blocks * block_tokens


@dataclass(slots=True)
class Server:
    """The state of one instance during a run."""

    instance: Instance
    block_tokens: int
    cache: PrefixCache
    queue: deque[Job] = field(default_factory=deque)
    inbound: list[Job] = field(default_factory=list)
    prefilling: Job | None = None
    busy_until: float = 0.0
    active: int = 0
    used_blocks: int = 0
    finished: deque[tuple[float, float]] = field(default_factory=deque)

    @classmethod
    def of(cls, instance: Instance, block_tokens: int, log: CacheLog) -> Server:
        """A fresh, idle instance with an empty cache."""
        return cls(instance, block_tokens, PrefixCache(instance.spec.kv_blocks, log))

    def prefill_time(self, request: Request, blocks: int) -> float:
        """Seconds to prefill ``request`` when its first ``blocks`` blocks are cached."""
        tokens = request.input_tokens - cached_tokens(request, blocks, self.block_tokens)
        return tokens / self.instance.spec.prefill_rate

    def start(self, now: float) -> Job | None:
        """Start the next prefill if the engine and a slot are free; the job started."""
        if self.prefilling is not None or not self.queue:
            return None
        if self.active >= self.instance.spec.batch_limit or self.queue[0].ready > now:
            return None
        job = self.queue.popleft()
        blocks = job.request.blocks
        local = self.cache.prefix(blocks)
        self.cache.touch(blocks[:local])
        held = max(local, job.fetched)
        job.cached = held
        job.start = now
        job.end = now + self.prefill_time(job.request, held)
        self.prefilling = job
        self.busy_until = job.end
        self.active += 1
        self.used_blocks += len(blocks)
        return job

    def finish_prefill(self, now: float) -> Job:
        """The running prefill ends: its blocks enter the cache."""
        job = self.prefilling
        assert job is not None
        self.cache.insert(job.request.blocks, now)
        self.prefilling = None
        self.finished.append((now, now - job.arrived))
        return job

    def finish_decode(self, job: Job) -> None:
        """A request's decode ends: its batch slot and KV blocks are free again."""
        self.active -= 1
        self.used_blocks -= len(job.request.blocks)

    def backlog(self, now: float, ahead: Iterable[Job] = ()) -> float:
        """Seconds of prefill work before a request arriving now could start (the waiting
        work an SCI reports), with the cache as it is plus the blocks of the work ahead."""
        work = max(0.0, self.busy_until - now) if self.prefilling is not None else 0.0
        return work + self.queued_work((*self.queue, *ahead))

    def queued_work(self, jobs: Sequence[Job], extra: set[int] | None = None) -> float:
        """Prefill seconds of ``jobs`` in order, each reusing the cache and those before it."""
        seen: set[int] = set() if extra is None else set(extra)
        held = self.cache.blocks
        total = 0.0
        for job in jobs:
            blocks = job.request.blocks
            count = 0
            for block in blocks:
                if block not in held and block not in seen:
                    break
                count += 1
            total += self.prefill_time(job.request, max(count, job.fetched))
            seen.update(blocks)
        return total

    def predict(self, request: Request, arrive: float, now: float) -> tuple[float, int]:
        """The clairvoyant start of prefill and cached blocks of ``request`` arriving at
        ``arrive``: the true queue, the requests already on their way that arrive first,
        the cache and what the work ahead will add to it (the oracle's view)."""
        free = self.busy_until if self.prefilling is not None else now
        seen: set[int] = set()
        if self.prefilling is not None:
            seen.update(self.prefilling.request.blocks)
        ahead = [*self.queue, *(j for j in self.inbound if j.arrived <= arrive)]
        held = self.cache.blocks
        for job in ahead:
            count = _prefix(job.request.blocks, held, seen)
            free = max(free, job.ready) + self.prefill_time(job.request, max(count, job.fetched))
            seen.update(job.request.blocks)
        return max(free, arrive), _prefix(request.blocks, held, seen)

    def computing_time(self, now: float, window: float) -> float | None:
        """Mean wait plus prefill (s) of the prefills that ended in the last ``window``."""
        finished = self.finished
        while finished and finished[0][0] < now - window:
            finished.popleft()
        if not finished:
            return None
        return sum(took for _, took in finished) / len(finished)

    def kv_usage(self) -> float:
        """The share of KV blocks held by requests in the batch (vLLM's cache usage)."""
        return min(1.0, self.used_blocks / self.instance.spec.kv_blocks)


def _prefix(blocks: Sequence[int], held: Container[int], seen: set[int]) -> int:
    count = 0
    for block in blocks:
        if block not in held and block not in seen:
            break
        count += 1
    return count
