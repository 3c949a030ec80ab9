"""Per-target results of fanned-out C-SMA calls: a failure does not stop the rest."""

from __future__ import annotations

import pytest

from controller.errors import ErrorItem, ErrorType
from controller.southbound import PeerUnreachableError, SouthboundError, Target, fan_out

UP, DOWN = Target("up", "192.0.2.1"), Target("down", "192.0.2.2")


def _call(target: Target, members: dict[str, object]) -> dict[str, object]:
    if target is DOWN:
        raise PeerUnreachableError(ErrorItem(ErrorType.TRANSPORT, "operation-failed", "down"))
    return {"echo": members["n"]}


def test_fan_out_returns_a_result_per_target_and_raises_only_on_request() -> None:
    results = fan_out(_call, [(UP, {"n": 1}), (DOWN, {"n": 2}), (UP, {"n": 3})])
    assert [r.output for r in results.results] == [{"echo": 1}, None, {"echo": 3}]
    (failed,) = results.failed
    assert failed.target is DOWN
    with pytest.raises(SouthboundError) as raised:
        results.raise_on_error()
    assert raised.value.items[0].message == "down"


def test_no_failure_raises_nothing() -> None:
    fan_out(_call, [(UP, {"n": 1})]).raise_on_error()
