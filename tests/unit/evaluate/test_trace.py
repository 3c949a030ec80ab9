"""Mooncake traces: parsing, refusals naming the line, scaling to a load level."""

from __future__ import annotations

import json

import pytest

from controller.evaluate import trace
from controller.evaluate.errors import EvaluateError


def _line(stamp: int, length: int, ids: list[int]) -> str:
    return json.dumps(
        {"timestamp": stamp, "input_length": length, "output_length": 3, "hash_ids": ids}
    )


def test_requests_are_read_in_arrival_order_with_their_conversation() -> None:
    lines = [_line(2000, 600, [7, 8]), "", _line(0, 100, [1]), _line(1000, 1100, [7, 8, 9])]
    requests = trace.parse(lines)
    assert [r.arrival for r in requests] == [0.0, 1.0, 2.0]
    assert [r.index for r in requests] == [0, 1, 2]
    assert [r.conversation for r in requests] == [1, 7, 7]
    assert requests[1].block_tokens(2, 512) == 1100 - 2 * 512


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON"),
        (json.dumps({"timestamp": 0, "input_length": 5, "output_length": 1}), "hash_ids"),
        (_line(-1, 5, [1]), "timestamp"),
        (json.dumps([1, 2]), "hash_ids"),
    ],
)
def test_a_bad_line_is_refused_naming_file_and_line(line: str, message: str) -> None:
    with pytest.raises(EvaluateError) as caught:
        trace.parse([_line(0, 5, [1]), line], "t.jsonl")
    item = caught.value.items[0]
    assert item.path == "t.jsonl:2"
    assert message in item.message


def test_scaling_to_a_load_level_sets_the_offered_prompt_tokens() -> None:
    requests = trace.parse([_line(t * 1000, 1000, [t]) for t in range(11)])
    assert trace.offered_tokens_per_s(requests) == pytest.approx(1100.0)
    scaled = trace.at_load(requests, 0.5, capacity=4400.0)
    assert trace.offered_tokens_per_s(scaled) == pytest.approx(2200.0)
    assert [r.blocks for r in scaled] == [r.blocks for r in requests]


def test_the_shipped_trace_is_mooncakes() -> None:
    requests = trace.load()
    assert len(requests) == 3993
    assert sum(r.input_tokens for r in requests) / len(requests) == pytest.approx(15325, abs=1)


def test_a_window_is_rebased_to_start_at_zero() -> None:
    requests = trace.parse([_line(t * 1000, 10, [t]) for t in range(10)])
    kept = trace.window(requests, 3.0, 4.0)
    assert [r.arrival for r in kept] == [0.0, 1.0, 2.0, 3.0]
    assert [r.index for r in kept] == [0, 1, 2, 3]


def test_a_conversation_keeps_its_ingress() -> None:
    shares = [0.5, 0.3, 0.2]
    picks = [trace.pick(conversation, 1, shares) for conversation in range(2000)]
    assert all(trace.pick(c, 1, shares) == picks[c] for c in range(2000))
    assert picks.count(0) / 2000 == pytest.approx(0.5, abs=0.05)
