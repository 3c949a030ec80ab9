"""Topology files: the shipped one, and refusals naming the dotted key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.evaluate import shipped, topology
from controller.evaluate.errors import EvaluateError


def test_the_shipped_topology_has_its_cited_figures() -> None:
    shipped = topology.load()
    assert [i.name for i in shipped.instances][:2] == ["us-east-1", "us-east-2"]
    assert len(shipped.instances) == 9
    assert shipped.capacity == pytest.approx(9 * 13510)
    assert shipped.rtt("eu-west", "ap-northeast") == pytest.approx(0.247)
    assert shipped.rtt("us-east", "eu-west") == pytest.approx(0.075)
    assert shipped.block_bytes == 512 * 65536
    assert shipped.bandwidth("us-east", "eu-west") == pytest.approx(10e9 / 8)
    assert shipped.bandwidth("us-east", "us-east") is None


def _doc() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(shipped.DEFAULT_TOPOLOGY.read_text())
    return document


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d.update(colour="red"), "t.json.colour"),
        (lambda d: d["sites"][1].update(region="mars"), "t.json.sites[1].region"),
        (
            lambda d: d["instance-types"]["h100-llama-3.1-8b-fp8"].update(**{"kv-blocks": 0}),
            "t.json.instance-types.h100-llama-3.1-8b-fp8.kv-blocks",
        ),
        (lambda d: d["ingresses"][0].update(share="lots"), "t.json.ingresses[0].share"),
        (lambda d: d["rtt-ms"]["us-east"].update(mars=3), "t.json.rtt-ms.us-east.mars"),
    ],
)
def test_a_bad_topology_is_refused_naming_the_key(change: Any, path: str) -> None:
    doc = _doc()
    change(doc)
    with pytest.raises(EvaluateError) as caught:
        topology.parse(doc, "t.json")
    assert caught.value.items[0].path == path


def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(EvaluateError, match="cannot read the topology"):
        topology.load(broken)
