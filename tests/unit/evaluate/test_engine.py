"""The simulation: what TTFT is made of, the prefix cache, queueing, batch slots, transfers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from controller.evaluate.cache import CacheLog, CacheMirror, PrefixCache
from controller.evaluate.engine import Decision, RunSettings, World, simulate
from controller.evaluate.reporting import ChannelSpec
from controller.evaluate.server import Job
from controller.evaluate.topology import Topology
from controller.evaluate.trace import Request
from tests.unit.evaluate.conftest import PREFILL, request


class Fixed:
    """Sends each request where ``where`` says (optionally asking for a transfer)."""

    name = "fixed"

    def __init__(self, where: Callable[[Request], int], *, transfer: bool = False) -> None:
        self.where = where
        self.transfer = transfer

    def channels(self, settings: RunSettings) -> Sequence[ChannelSpec]:
        return ()

    def decide(self, request: Request, ingress: int, world: World) -> Decision:
        return Decision(self.where(request), transfer=self.transfer)

    def observe(self, event: int, job: Job, world: World) -> None:
        return None


def test_ttft_is_round_trip_plus_prefill(two_regions: Topology) -> None:
    near = simulate([request(0, 0.0, (1, 2, 3))], two_regions, Fixed(lambda r: 0))
    far = simulate([request(0, 0.0, (1, 2, 3))], two_regions, Fixed(lambda r: 2))
    assert near.outcomes[0].ttft == pytest.approx(0.001 + 300 / PREFILL)
    assert far.outcomes[0].ttft == pytest.approx(0.100 + 300 / PREFILL)
    assert far.outcomes[0].cross_region
    assert not near.outcomes[0].cross_region


def test_a_cached_prefix_is_not_prefilled_again(two_regions: Topology) -> None:
    first = request(0, 0.0, (1, 2, 3))
    turn = request(1, 5.0, (1, 2, 3, 4, 5), conv=1)
    elsewhere = request(2, 10.0, (1, 2, 3, 4, 5, 6), conv=1)
    placement = {0: 0, 1: 0, 2: 1}
    result = simulate([first, turn, elsewhere], two_regions, Fixed(lambda r: placement[r.index]))
    by = {o.request: o for o in result.outcomes}
    assert by[1].cached_tokens == 300
    assert by[1].ttft == pytest.approx(0.001 + 200 / PREFILL)
    assert by[2].cached_tokens == 0  # instance 0 holds the prefix, instance 1 does not
    assert by[2].ttft == pytest.approx(0.001 + 600 / PREFILL)


def test_a_fully_cached_prompt_still_computes_its_last_token(two_regions: Topology) -> None:
    result = simulate(
        [request(0, 0.0, (1, 2)), request(1, 5.0, (1, 2))], two_regions, Fixed(lambda r: 0)
    )
    assert result.outcomes[1].cached_tokens == 199
    assert result.outcomes[1].ttft == pytest.approx(0.001 + 1 / PREFILL)


def test_a_request_waits_for_the_prefill_ahead_of_it(two_regions: Topology) -> None:
    result = simulate(
        [request(0, 0.0, (1, 2)), request(1, 0.0, (7, 8, 9))], two_regions, Fixed(lambda r: 0)
    )
    assert result.outcomes[1].ttft == pytest.approx(0.001 + (200 + 300) / PREFILL)


def test_a_full_batch_holds_a_request_until_a_slot_frees(two_regions: Topology) -> None:
    long_decode = [request(i, 0.0, (100 + i,), output=1000) for i in range(8)]
    late = request(8, 0.0, (200,))
    result = simulate([*long_decode, late], two_regions, Fixed(lambda r: 0))
    first_end = 100 / PREFILL  # the first request's decode ends 10 s after its prefill
    assert result.outcomes[8].ttft == pytest.approx(0.001 + first_end + 1000 / 100 + 0.1)


def test_lru_keeps_a_prefix_longer_than_its_tail() -> None:
    cache = PrefixCache(3)
    cache.insert((1, 2, 3), 0.0)
    cache.insert((9,), 1.0)
    assert cache.prefix((1, 2, 3)) == 2
    assert 3 not in cache.blocks


def test_a_mirror_replays_the_cache_as_of_a_time() -> None:
    log = CacheLog()
    cache = PrefixCache(2, log)
    cache.insert((1, 2), 1.0)
    cache.insert((3,), 2.0)
    mirror = CacheMirror(log)
    mirror.advance(1.5)
    assert mirror.blocks == {1, 2}
    mirror.advance(2.0)
    assert mirror.blocks == {1, 3}
    assert mirror.prefix((1, 2)) == 1


def test_a_transfer_fetches_the_prefix_another_region_holds(two_regions: Topology) -> None:
    blocks = tuple(range(1, 11))
    first = request(0, 0.0, blocks)
    again = request(1, 20.0, (*blocks, 11), conv=1)
    result = simulate([first, again], two_regions, Fixed(lambda r: 2 * r.index, transfer=True))
    moved = 1000 * 1000  # ten blocks of 100 tokens of 1,000 bytes
    took = moved / 1e9 + 0.1  # 8 Gbit/s, and the round trip between the regions
    assert result.outcomes[1].cached_tokens == 1000
    assert result.outcomes[1].ttft == pytest.approx(0.100 + took + 100 / PREFILL)
