"""The routers without prefix awareness, and the clairvoyant oracle.

- ``nearest``: anycast / GeoDNS: the site with the smallest round trip from the ingress,
  round robin over its instances (a Kubernetes Service behind a GeoDNS name).
- ``round-robin``: every instance in turn, wherever it is.
- ``least-loaded``: the instance with the fewest requests waiting or running in the last load
  report (a global server load balancer polling its pools every reporting interval, as
  F5 BIG-IP DNS's Least Connections method does); ties in turn.
- ``oracle``: knows every instance's true queue, the requests on their way to it and its
  cache at the instant of decision, and picks the smallest TTFT (the limit of a per-request
  decision; it does not look ahead at requests not yet arrived).
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.evaluate.engine import Decision, RunSettings, World
from controller.evaluate.reporting import ChannelSpec, stale
from controller.evaluate.server import Job
from controller.evaluate.trace import Request

LOAD = "load"


class Nearest:
    """Anycast / GeoDNS to the nearest site, round robin inside it."""

    name = "nearest"

    def __init__(self) -> None:
        self._turn: dict[str, int] = {}

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return ()

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        rtts = world.rtt[ingress]
        best = min(rtts)
        site = next(i.site for i in world.topology.instances if rtts[i.index] == best)
        members = [i.index for i in world.topology.instances if i.site == site]
        turn = self._turn.get(site, 0)
        self._turn[site] = turn + 1
        return Decision(members[turn % len(members)])

    def observe(self, event: int, job: Job, world: World) -> None:
        return None


class RoundRobin:
    """Every instance in turn."""

    name = "round-robin"

    def __init__(self) -> None:
        self._turn = 0

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return ()

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        self._turn += 1
        return Decision(self._turn % len(world.servers))

    def observe(self, event: int, job: Job, world: World) -> None:
        return None


class LeastLoaded:
    """The fewest requests in the last load report; ties in turn."""

    name = "least-loaded"

    def __init__(self) -> None:
        self._turn = 0

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return (ChannelSpec(LOAD, settings.interval, settings.processing),)

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        held = [world.held(LOAD, server.instance.index) for server in world.servers]
        loads = [0 if sample is None else sample.requests for sample in held]
        least = min(loads)
        tied = [index for index, load in enumerate(loads) if load == least]
        self._turn += 1
        chosen = tied[self._turn % len(tied)]
        return Decision(chosen, stale=stale(held[chosen], world.now, world.settings.interval))

    def observe(self, event: int, job: Job, world: World) -> None:
        return None


class Oracle:
    """The smallest true TTFT at the instant of decision; ``predicted`` keeps, per request,
    the TTFT it expected."""

    name = "oracle"

    def __init__(self) -> None:
        self.predicted: dict[int, float] = {}

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return ()

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        best, best_ttft = 0, float("inf")
        now = world.now
        for server in world.servers:
            rtt = world.rtt[ingress][server.instance.index]
            start, cached = server.predict(request, now + rtt / 2, now)
            ttft = start + server.prefill_time(request, cached) + rtt / 2 - now
            if ttft < best_ttft:
                best, best_ttft = server.instance.index, ttft
        self.predicted[request.index] = best_ttft
        return Decision(best)

    def observe(self, event: int, job: Job, world: World) -> None:
        return None
