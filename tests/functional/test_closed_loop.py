"""The closed-loop bed (tools/closed_loop) carries prompts through the real system and its
instances follow the simulator's prefix model.

The C-PS steers the ingress forwarder (hierarchical selection: the nearest site); twenty turns
of conversations of the trace (which reuse their prefixes) go one after the other through the
forwarder, the SCI and the prefill instance; each answer names the CSCI-ID that served it, and
the tokens the instance reused are exactly what the simulator's cache
(:class:`controller.evaluate.cache.PrefixCache`) says for that sequence of prompts. The timing
comparison is the tool's (``python -m tools.closed_loop``), not a test's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from controller.demo.launch import wait_until
from controller.evaluate import topology, trace
from controller.evaluate.cache import PrefixCache
from tools.closed_loop import bed
from tools.closed_loop.__main__ import NEAREST, TOPOLOGY
from tools.closed_loop.replay import OK, replay

pytestmark = pytest.mark.functional


def test_prompts_go_through_the_steered_ingress_and_reuse_what_the_model_says(
    tmp_path: Path,
) -> None:
    topo = topology.load(TOPOLOGY)
    window = trace.window(trace.load(), 300.0, 120.0)
    turns = Counter(r.conversation for r in window)
    requests = [r for r in window if turns[r.conversation] > 1][:20]  # conversations' turns
    sequential = [replace(r, arrival=0.0) for r in requests]
    with bed.start(tmp_path, topo, NEAREST) as running:
        nearest = next(s for s in running.sites if s.region == topo.ingresses[0].region)
        wait_until(
            "the ingress steered to the nearest site",
            lambda: bed.steered(running) == nearest.csci_id,
            timeout=60,
            seen=lambda: bed.steered(running),
        )
        answers = []
        for request in sequential:  # one at a time: the instance sees them in this order
            answers.extend(replay(running.ingress, [request], lambda _: 0.0, timeout=60.0))
    assert [(a.status, a.error) for a in answers] == [(OK, "")] * len(requests)
    assert {a.csci_id for a in answers} == {nearest.csci_id}
    model = PrefixCache(topo.instances[0].spec.kv_blocks)
    for request, answer in zip(requests, answers, strict=True):
        held = model.prefix(request.blocks)
        expected = (
            request.input_tokens - 1 if held == len(request.blocks) else held * topo.block_tokens
        )
        assert answer.cached_tokens == expected, request.index
        model.insert(request.blocks, 0.0)
    assert sum(bool(a.cached_tokens) for a in answers) >= 5  # turns reuse their prefixes
