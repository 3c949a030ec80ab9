"""The baselines behave as their authors describe them, and stale reports make the
least-loaded router herd."""

from __future__ import annotations

from collections import Counter

import pytest

from controller.evaluate.baselines import LeastLoaded, Nearest, Oracle, RoundRobin
from controller.evaluate.engine import RunSettings, simulate
from controller.evaluate.routers import Dynamo, Gorgo, LlmD, SGLang
from controller.evaluate.topology import Topology
from controller.evaluate.trace import Request, pick
from tests.unit.evaluate.conftest import build_topology, request

BURST = range(3, 13)


def _herding_trace() -> list[Request]:
    """Three long-running requests take instances 1-3 (the first ones in turn), then a
    burst of ten small requests arrives at 9 s, after every instance's first report."""
    warm = [request(i, 0.0, (100 + i,), output=2000) for i in range(3)]
    burst = [request(i, 9.0 + 0.05 * (i - 3), (200 + i,)) for i in BURST]
    return [*warm, *burst]


def _burst_spread(interval: float) -> Counter[int]:
    topology = build_topology(sites=(("s", "a", 4),))
    result = simulate(_herding_trace(), topology, LeastLoaded(), RunSettings(interval=interval))
    return Counter(o.instance for o in result.outcomes if o.request in BURST)


def test_stale_load_reports_make_least_loaded_herd() -> None:
    stale = _burst_spread(10.0)
    fresh = _burst_spread(0.1)
    assert stale.most_common(1)[0][1] == len(BURST)  # every request on the idle-looking one
    assert len(fresh) >= 3
    assert fresh.most_common(1)[0][1] <= len(BURST) // 2


def test_nearest_stays_in_the_ingress_region_and_takes_turns(two_regions: Topology) -> None:
    requests = [request(i, float(i), (i + 1,)) for i in range(4)]
    result = simulate(requests, two_regions, Nearest())
    assert [o.instance for o in result.outcomes] == [0, 1, 0, 1]


def test_round_robin_ignores_the_network(two_regions: Topology) -> None:
    requests = [request(i, float(i), (i + 1,)) for i in range(4)]
    result = simulate(requests, two_regions, RoundRobin())
    assert sorted(o.instance for o in result.outcomes) == [0, 1, 2, 3]


def _conversation() -> list[Request]:
    """A long first turn, a second unrelated request, then the first one's next turn."""
    prompt = tuple(range(1, 21))
    return [
        request(0, 0.0, prompt),
        request(1, 10.0, (500, 501)),
        request(2, 20.0, (*prompt, 21), conv=1),
    ]


@pytest.mark.parametrize("router", [SGLang, LlmD, Dynamo, Gorgo])
def test_cache_aware_routers_send_a_turn_back_to_its_prefix(router: type) -> None:
    topology = build_topology()
    result = simulate(_conversation(), topology, router())
    by = {o.request: o for o in result.outcomes}
    assert by[2].instance == by[0].instance
    assert by[2].cached_tokens == 2000


def _conversation_at(ingress: int, shares: list[float], start: int) -> int:
    """A conversation id that enters at ``ingress``."""
    return next(c for c in range(start, start + 1000) if pick(c, 1, shares) == ingress)


def test_gorgo_prices_the_round_trip_against_the_prefill() -> None:
    # Both prompts are first served in region b (from its ingress); their next turns enter
    # in region a: the short one is recomputed there, the long one is worth the round trip.
    topology = build_topology(
        sites=(("near", "a", 1), ("far", "b", 1)),
        ingresses=(("in-a", "a", 1.0), ("in-b", "b", 1.0)),
        rtt_ms=200,
    )
    shares = [1.0, 1.0]
    short_b, long_b = _conversation_at(1, shares, 0), _conversation_at(1, shares, 5000)
    short_a, long_a = _conversation_at(0, shares, 10000), _conversation_at(0, shares, 15000)
    short, long_ = (short_b,), tuple(range(long_b, long_b + 30))
    requests = [
        request(0, 0.0, short, conv=short_b),
        request(1, 0.0, long_, conv=long_b),
        request(2, 20.0, (*short, 3), conv=short_a),
        request(3, 20.0, (*long_, 40), conv=long_a),
    ]
    result = simulate(requests, topology, Gorgo())
    by = {o.request: o for o in result.outcomes}
    assert by[0].instance == by[1].instance == 1
    assert by[2].instance == 0
    assert by[3].instance == 1
    assert by[3].cached_tokens == 3000


def test_the_oracle_knows_the_ttft_it_chooses() -> None:
    topology = build_topology()
    requests = [
        request(0, 0.0, tuple(range(1, 11))),
        request(1, 0.0, tuple(range(20, 25))),
        request(2, 0.1, (*range(1, 11), 11), conv=1),
        request(3, 0.2, tuple(range(30, 33))),
        request(4, 0.3, (*range(20, 25), 26), conv=20),
    ]
    oracle = Oracle()
    result = simulate(requests, topology, oracle)
    for outcome in result.outcomes:
        assert outcome.ttft == pytest.approx(oracle.predicted[outcome.request])


@pytest.mark.parametrize("policy", [Nearest, RoundRobin, LeastLoaded, SGLang, LlmD, Dynamo, Gorgo])
def test_the_oracle_is_never_worse_when_decisions_do_not_interact(policy: type) -> None:
    # Arrivals far apart: no request waits for another, so the instant is all that matters.
    topology = build_topology(rtt_ms=30)
    prompts = [tuple(range(k * 100, k * 100 + 1 + k % 4)) for k in range(6)]
    requests: list[Request] = []
    for turn in range(3):
        for k, prompt in enumerate(prompts):
            index = len(requests)
            requests.append(
                request(index, 30.0 * index, (*prompt, *range(9000, 9000 + turn)), conv=k)
            )
    best = simulate(requests, topology, Oracle())
    other = simulate(requests, topology, policy())
    for mine, theirs in zip(best.outcomes, other.outcomes, strict=True):
        assert mine.ttft <= theirs.ttft + 1e-9
