"""agents.csma.capability: MSG-4 as the C-SMA builds it, checked against the module."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from agents.common.config import ConfigError
from agents.csma.capability import (
    Advertised,
    Capability,
    Latency,
    advertisement,
    read_capability,
)
from agents.csma.config import load_config
from controller.model import InstanceKind, Schema
from controller.types import CsciId, CsId
from tests.unit.csma.values import entry, key

AS = "ietf-cats-agent-selection"
NOW = 1_800_000_000.0
OFFERED = Capability(
    "capable",
    200_000,
    ("request-response", "tool-call"),
    ("bf16",),
    Decimal(10_000),
    40 * 10**9,
    15 * 10**9,
    resident=True,
    load_rate=Decimal(2000),
)


def _rpc(members: dict[str, object]) -> str:
    return json.dumps({f"{AS}:advertise-capability": members})


def test_msg4_carries_the_configured_capability_and_the_measured_step_latency(
    schema: Schema,
) -> None:
    instances = [
        Advertised(CsciId("10.0.0.1:80"), CsId("ARS"), OFFERED),
        Advertised(CsciId("10.0.0.2:80"), CsId("ARS"), None),  # nothing known yet
    ]
    members = advertisement(
        "csma-1", instances, {key("10.0.0.1:80"): entry("10.0.0.1:80", 8, "42")}, NOW, 90_000
    )
    assert members is not None
    schema.validate(_rpc({**members, "sequence-number": "7"}), InstanceKind.RPC)
    (candidate,) = members["candidate"]
    computing = candidate["computing"]
    assert computing["capability"]["tier-offered"] == "capable"
    assert computing["token-rate"]["prefill-rate"] == "10000.000"
    assert computing["step-latency"]["mean"] == "42.000"  # a mean: no p95 is claimed
    assert "p95" not in computing["step-latency"]
    assert {part["source"] for part in computing.values()} == {"csma-1"}
    assert {part["freshness-bound"] for part in computing.values()} == {"90000"}


def test_msg4_says_nothing_of_what_the_csma_does_not_know() -> None:
    bare = [Advertised(CsciId("10.0.0.2:80"), CsId("ARS"), None)]
    assert advertisement("csma-1", bare, {}, NOW, 90_000) is None
    withdrawn = {key("10.0.0.2:80"): entry("10.0.0.2:80", 0)}
    assert advertisement("csma-1", bare, withdrawn, NOW, 90_000) is None  # GAS 0: no latency


def test_the_capability_is_read_and_checked_by_the_module(tmp_path: Path) -> None:
    """cats-csma-config's capability container: read as given; a wrong mode or an unknown
    key is refused by libyang with its data path."""
    parsed = read_capability({"tier": "capable", "modes": ["tool-call"], "resident": True})
    assert parsed == Capability("capable", modes=("tool-call",))
    where = "/cats-csma-config:csma/instances[csci-id='x']/capability"
    for capability, path in (({"modes": ["telepathy"]}, f"{where}/modes"), ({"color": 1}, where)):
        config = tmp_path / "csma.json"
        instance = {"csci-id": "x", "cs-id": "A", "capability": capability}
        config.write_text(json.dumps({"site": "S", "instances": [instance]}))
        with pytest.raises(ConfigError) as refused:
            load_config(config)
        assert refused.value.items[0].path == path


STATED = Capability(
    "capable",
    free_capacity=Decimal("0.6"),
    queue_delay=Latency(Decimal(50), Decimal(100)),
    step_latency=Latency(Decimal(250), Decimal(500), window_ms=30_000),
)


def test_stated_latencies_and_free_capacity_are_advertised_as_asserted(schema: Schema) -> None:
    """The operator's queue delay, step latency (median, p95, window) and free capacity go out
    as the agent model has them, asserted; a stated step latency is not replaced by the SCI's
    measured mean (a mean never stands for a p95, 7.5)."""
    instances = [Advertised(CsciId("10.0.0.1:80"), CsId("ARS"), STATED)]
    measured = {key("10.0.0.1:80"): entry("10.0.0.1:80", 8, "42")}
    members = advertisement("csma-1", instances, measured, NOW, 90_000)
    assert members is not None
    schema.validate(_rpc({**members, "sequence-number": "8"}), InstanceKind.RPC)
    computing = members["candidate"][0]["computing"]
    assert computing["accelerator"]["free-capacity"] == "0.6000"
    queue = computing["waiting-work"]["queue-delay"]
    assert (queue["median"], queue["p95"], queue["window"]) == ("50.000", "100.000", "60000")
    step = computing["step-latency"]
    assert (step["median"], step["p95"], step["window"]) == ("250.000", "500.000", "30000")
    assert "mean" not in step
    assert {step["confidence"], queue["confidence"]} == {"asserted"}


def test_a_stated_latency_is_read_with_its_default_window_and_needs_a_value(
    tmp_path: Path,
) -> None:
    """window-ms defaults to 60000; a queue-delay with neither median nor p95 is refused by
    the module's must, naming the container."""
    parsed = read_capability({"resident": True, "queue-delay": {"p95": "100", "window-ms": 60000}})
    assert parsed.queue_delay == Latency(None, Decimal(100))
    config = tmp_path / "csma.json"
    stated = {"queue-delay": {"window-ms": 1000}}
    instance = {"csci-id": "x", "cs-id": "A", "capability": stated}
    config.write_text(json.dumps({"site": "S", "instances": [instance]}))
    with pytest.raises(ConfigError) as refused:
        load_config(config)
    (item,) = refused.value.items
    assert item.path == "/cats-csma-config:csma/instances[csci-id='x']/capability/queue-delay"
    assert "median, its p95 or both" in item.message
