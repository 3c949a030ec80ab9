"""Small topologies and traces for the simulator's unit tests."""

from __future__ import annotations

from typing import Any

import pytest

from controller.evaluate import topology as topology_module
from controller.evaluate.topology import Topology
from controller.evaluate.trace import Request

PREFILL = 1000.0  # tokens/s: a 1,000-token prompt takes one second
BLOCK = 100


def build_topology(
    sites: tuple[tuple[str, str, int], ...] = (("near", "a", 2), ("far", "b", 2)),
    ingresses: tuple[tuple[str, str, float], ...] = (("in-a", "a", 1.0),),
    rtt_ms: float = 100.0,
    kv_blocks: int = 1000,
) -> Topology:
    """Two regions a and b, ``rtt_ms`` apart (1 ms inside a region), the C-PS in a."""
    doc: dict[str, Any] = {
        "name": "test",
        "block-tokens": BLOCK,
        "kv-bytes-per-token": 1000,
        "cps-region": "a",
        "rtt-ms": {"a": {"a": 1, "b": rtt_ms}, "b": {"a": rtt_ms, "b": 1}},
        "transfer-gbps": {"a": {"b": 8}, "b": {"a": 8}},
        "instance-types": {
            "gpu": {
                "prefill-tokens-per-s": PREFILL,
                "decode-tokens-per-s": 100,
                "batch-limit": 8,
                "kv-blocks": kv_blocks,
            }
        },
        "ingresses": [{"name": n, "region": r, "share": s} for n, r, s in ingresses],
        "sites": [
            {"name": n, "region": r, "instances": k, "instance-type": "gpu"} for n, r, k in sites
        ],
    }
    return topology_module.parse(doc)


def request(
    index: int, arrival: float, blocks: tuple[int, ...], *, output: int = 1, conv: int | None = None
) -> Request:
    """A request whose prompt is exactly ``blocks`` full blocks."""
    return Request(
        index, arrival, len(blocks) * BLOCK, output, blocks, blocks[0] if conv is None else conv
    )


@pytest.fixture
def two_regions() -> Topology:
    return build_topology()
