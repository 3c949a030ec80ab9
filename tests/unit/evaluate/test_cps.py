"""The C-PS's policies in the simulator decide through the selection core: state presence
from the C-SMA's view, dispatch accounting against herding, the recommended configuration."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from controller.evaluate import policyfile, shipped
from controller.evaluate.cps import Cats, CatsJsa
from controller.evaluate.engine import RunSettings, simulate
from controller.evaluate.errors import EvaluateError
from controller.evaluate.trace import Request, pick
from controller.model import Encoding, InstanceKind, Schema
from tests.unit.evaluate.conftest import build_topology, request

ACCOUNTING = {
    "ietf-cats-service-metrics:update-control": {"dispatch-accounting": {"enabled": True}}
}


def _at(ingress: int, start: int) -> int:
    return next(c for c in range(start, start + 1000) if pick(c, 1, [1.0, 1.0]) == ingress)


def test_a_turn_follows_its_prefix_across_regions_when_the_recompute_costs_more() -> None:
    topology = build_topology(
        sites=(("near", "a", 1), ("far", "b", 1)),
        ingresses=(("in-a", "a", 1.0), ("in-b", "b", 1.0)),
        rtt_ms=200,
    )
    first_at_b, next_at_a = _at(1, 0), _at(0, 5000)
    prompt = tuple(range(first_at_b, first_at_b + 30))
    requests = [
        request(0, 0.0, prompt, conv=first_at_b),
        request(1, 30.0, (*prompt, 99), conv=next_at_a),
        request(2, 40.0, (7,), conv=next_at_a),
    ]
    result = simulate(requests, topology, Cats(policyfile.defaults()), RunSettings(interval=1.0))
    by = {o.request: o for o in result.outcomes}
    assert by[0].instance == 1  # the first turn: nothing cached, the near site of in-b
    assert by[1].instance == 1  # the C-SMA's state view holds its prefix: worth 200 ms
    assert by[1].cached_tokens == 3000
    assert by[2].instance == 0  # a one-block prompt is recomputed near in-a


def _burst() -> list[Request]:
    """Ten one-second prompts within half a second, after every instance's first report."""
    return [request(i, 10.0 + 0.05 * i, tuple(range(100 * i, 100 * i + 10))) for i in range(10)]


def _spread(policy: Cats | CatsJsa) -> Counter[int]:
    topology = build_topology(sites=(("s", "a", 4),))
    result = simulate(_burst(), topology, policy, RunSettings(interval=10.0))
    return Counter(o.instance for o in result.outcomes)


def test_without_dispatch_accounting_a_burst_herds_on_the_last_report() -> None:
    assert len(_spread(Cats(policyfile.defaults()))) == 1


def test_dispatch_accounting_spreads_a_burst_between_reports() -> None:
    spread = _spread(Cats(policyfile.parse(ACCOUNTING)))
    assert len(spread) == 4
    assert max(spread.values()) <= 3


def test_decisions_on_accounted_or_unreported_values_say_so() -> None:
    topology = build_topology(sites=(("s", "a", 4),))
    recommended = simulate(_burst(), topology, Cats(policyfile.load()), RunSettings(10.0))
    assert not recommended.outcomes[0].estimated  # nothing selected since the report yet
    assert all(o.estimated for o in recommended.outcomes[4:])  # counted in: estimates
    assert not any(o.stale for o in recommended.outcomes)  # a heartbeat every second
    quiet = simulate(_burst(), topology, Cats(policyfile.parse(ACCOUNTING)), RunSettings(1.0))
    assert all(o.stale for o in quiet.outcomes[:4])  # unchanged since 0 s, not re-sent


def test_the_joint_selection_alone_herds_without_accounting() -> None:
    # Equal Computing Times: the near instance has the smallest TST until a report says more.
    topology = build_topology(sites=(("near", "a", 1), ("far", "b", 3)))
    herd = simulate(_burst(), topology, CatsJsa(policyfile.defaults()), RunSettings(10.0))
    assert {o.instance for o in herd.outcomes} == {0}
    spread = simulate(_burst(), topology, CatsJsa(policyfile.load()), RunSettings(10.0))
    assert {o.instance for o in spread.outcomes} == {0, 1, 2, 3}


def test_the_recommended_policy_is_valid_yang_and_enables_accounting() -> None:
    text = shipped.RECOMMENDED.read_text()
    with Schema() as schema:
        schema.validate(text, InstanceKind.CONFIG, Encoding.JSON)
    recommended = policyfile.load()
    assert recommended.update.dispatch.enabled
    assert recommended.update.delta.computing_time_relative == 0
    assert recommended.context.look_ahead_horizon == 1
    assert [o.value for o in recommended.requirement.objectives] == [
        "maximize-gas",
        "minimize-latency",
    ]


def test_a_policy_document_with_an_unknown_member_is_refused() -> None:
    with pytest.raises(EvaluateError, match="unexpected member"):
        policyfile.parse(json.loads('{"ietf-cats-steering:steering": {}}'))
