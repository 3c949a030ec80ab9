"""The discrete-event simulation: requests enter at ingresses, a policy picks an instance,
the instances prefill and decode, the report path carries samples to the deciders.

TTFT = round trip between the ingress and the chosen site + wait at the instance (queue,
batch slot, KV transfer) + prefill of the blocks not cached there. A policy decides at the
ingress with what it holds at that instant; what it holds is what its channels delivered
(stale by their interval, thresholds and delay) and what it saw of its own requests.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from controller.evaluate.cache import CacheLog, CacheMirror
from controller.evaluate.reporting import Channel, ChannelSpec, Sample, observe
from controller.evaluate.server import Job, Server, cached_tokens
from controller.evaluate.topology import Topology
from controller.evaluate.trace import Request, pick

ARRIVAL, AT_INSTANCE, READY, PREFILL_END, DECODE_END, SAMPLE, DELIVER, SEEN = range(8)
FIRST_TOKEN, COMPLETE = 0, 1


@dataclass(frozen=True, slots=True)
class Decision:
    """A policy's choice: the instance, whether to fetch the missing prefix from another
    instance first, and whether the choice rested on estimated or stale values."""

    instance: int
    transfer: bool = False
    estimated: bool = False
    stale: bool = False


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What the simulated system looks like around the policy (not the policy itself)."""

    interval: float = 1.0
    processing: float = 0.01
    seed: int = 1


class World:
    """What a policy may look at: the topology, the channels it asked for, the clock, and
    (for the clairvoyant oracle only) the true state of the instances."""

    def __init__(self, topology: Topology, settings: RunSettings) -> None:
        self.topology = topology
        self.settings = settings
        self.now = 0.0
        self.logs = [CacheLog() for _ in topology.instances]
        self.servers = [
            Server.of(i, topology.block_tokens, self.logs[i.index]) for i in topology.instances
        ]
        self.channels: dict[str, Channel] = {}
        self.index = {i.name: i.index for i in topology.instances}
        regions = [i.region for i in topology.ingresses]
        self.rtt = [[topology.rtt(g, i.region) for i in topology.instances] for g in regions]

    def mirrors(self) -> list[CacheMirror]:
        """A fresh view of every instance's cache, to be advanced by its owner."""
        return [CacheMirror(log) for log in self.logs]

    def held(self, channel: str, instance: int) -> Sample | None:
        """The newest sample of ``instance`` the decider holds on ``channel``."""
        return self.channels[channel].held[instance]


class Policy(Protocol):
    """A selection policy under evaluation."""

    name: str

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        """The report or metrics channels the policy reads."""

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        """The instance for ``request`` entering at ``ingress`` at ``world.now``."""

    def observe(self, event: int, job: Job, world: World) -> None:
        """The router saw a first token or a completion of one of its requests."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one request."""

    request: int
    ingress: int
    instance: int
    ttft: float
    cached_tokens: int
    input_tokens: int
    cross_region: bool
    estimated: bool
    stale: bool


@dataclass(frozen=True, slots=True)
class RunResult:
    """Every request's outcome and the report path's counters."""

    policy: str
    outcomes: tuple[Outcome, ...]
    samples_offered: int
    samples_suppressed: int


class _Run:
    def __init__(self, topology: Topology, policy: Policy, settings: RunSettings) -> None:
        self.world = World(topology, settings)
        self.policy = policy
        self.events: list[tuple[float, int, int, Any]] = []
        self.counter = itertools.count()
        self.decisions: dict[int, Decision] = {}
        self.outcomes: list[Outcome] = []
        for index, spec in enumerate(policy.channels(settings)):
            vantage = spec.vantage or topology.cps_region
            delays = [
                topology.rtt(i.region, vantage) / 2 + spec.processing for i in topology.instances
            ]
            self.world.channels[spec.name] = Channel(spec, len(topology.instances), delays)
            for server in self.world.servers:
                phase = spec.interval * ((server.instance.index * 0.618 + index * 0.31) % 1.0)
                self.push(phase, SAMPLE, (spec.name, server.instance.index))

    def push(self, at: float, kind: int, payload: Any) -> None:
        heapq.heappush(self.events, (at, next(self.counter), kind, payload))

    def arrive(self, request: Request, ingress: int) -> None:
        world = self.world
        decision = self.policy.decide(request, ingress, world)
        self.decisions[request.index] = decision
        rtt = world.rtt[ingress][decision.instance]
        at = world.now + rtt / 2
        job = Job(request, ingress, decision.instance, world.now, rtt, at, at)
        world.servers[decision.instance].inbound.append(job)
        self.push(at, AT_INSTANCE, (decision.instance, job))

    def at_instance(self, index: int, job: Job) -> None:
        server = self.world.servers[index]
        server.inbound.remove(job)
        decision = self.decisions[job.request.index]
        if decision.transfer:
            job.fetched, took = self._fetch(index, job)
            job.ready = job.arrived + took
        if job.ready > self.world.now:
            self.push(job.ready, READY, (index, job))
            return
        server.queue.append(job)
        self.kick(index)

    def _fetch(self, index: int, job: Job) -> tuple[int, float]:
        """The longest prefix another instance holds, and the time to move what is missing."""
        topology = self.world.topology
        target = self.world.servers[index]
        local = target.cache.prefix(job.request.blocks)
        best, took = local, 0.0
        for other in self.world.servers:
            region = other.instance.region
            bandwidth = topology.bandwidth(region, target.instance.region)
            held = other.cache.prefix(job.request.blocks)
            if bandwidth is None or held <= best:
                continue
            size = (held - local) * topology.block_bytes
            best, took = held, size / bandwidth + topology.rtt(region, target.instance.region)
        return best, took

    def kick(self, index: int) -> None:
        job = self.world.servers[index].start(self.world.now)
        if job is not None:
            self.push(job.end, PREFILL_END, index)

    def prefill_end(self, index: int) -> None:
        world = self.world
        server = world.servers[index]
        job = server.finish_prefill(world.now)
        decision = self.decisions[job.request.index]
        request = job.request
        self.outcomes.append(
            Outcome(
                request.index,
                job.ingress,
                index,
                world.now + job.rtt / 2 - job.decided_at,
                cached_tokens(request, job.cached, server.block_tokens),
                request.input_tokens,
                world.topology.ingresses[job.ingress].region != server.instance.region,
                decision.estimated,
                decision.stale,
            )
        )
        decode = request.output_tokens / server.instance.spec.decode_rate
        self.push(world.now + decode, DECODE_END, (index, job))
        self.push(world.now + job.rtt / 2, SEEN, (FIRST_TOKEN, job))
        self.push(world.now + decode + job.rtt / 2, SEEN, (COMPLETE, job))
        self.kick(index)

    def sample(self, name: str, index: int) -> None:
        world = self.world
        channel = world.channels[name]
        spec = channel.spec
        sample = observe(world.servers[index], world.now, spec.window)
        sent = channel.offer(sample)
        self.push(world.now + channel.delays[index], DELIVER, (name, sample, sent))
        self.push(world.now + spec.interval, SAMPLE, (name, index))

    def run(self, requests: Sequence[Request]) -> RunResult:
        world = self.world
        shares = [g.share for g in world.topology.ingresses]
        for request in requests:
            ingress = pick(request.conversation, world.settings.seed, shares)
            self.push(request.arrival, ARRIVAL, (request, ingress))
        remaining = len(requests)
        events = self.events
        while events and remaining:
            at, _, kind, payload = heapq.heappop(events)
            world.now = at
            if kind == ARRIVAL:
                self.arrive(*payload)
            elif kind in (AT_INSTANCE, READY):
                index, job = payload
                if kind == AT_INSTANCE:
                    self.at_instance(index, job)
                else:
                    world.servers[index].queue.append(job)
                    self.kick(index)
            elif kind == PREFILL_END:
                self.prefill_end(payload)
                remaining -= 1
            elif kind == DECODE_END:
                index, job = payload
                world.servers[index].finish_decode(job)
                self.kick(index)
            elif kind == SAMPLE:
                self.sample(*payload)
            elif kind == DELIVER:
                name, sample, sent = payload
                world.channels[name].deliver(sample, sent=sent)
            else:
                event, job = payload
                self.policy.observe(event, job, world)
        channels = world.channels.values()
        return RunResult(
            self.policy.name,
            tuple(sorted(self.outcomes, key=lambda o: o.request)),
            sum(c.offered for c in channels),
            sum(c.suppressed for c in channels),
        )


def simulate(
    requests: Sequence[Request],
    topology: Topology,
    policy: Policy,
    settings: RunSettings | None = None,
) -> RunResult:
    """Replay ``requests`` over ``topology`` with ``policy`` deciding; every outcome."""
    return _Run(topology, policy, settings or RunSettings()).run(requests)
