"""agents.csma.capability: MSG-4 as the C-SMA builds it, checked against the module."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from agents.common.config import ConfigError, Table
from agents.csma.capability import Advertised, Capability, advertisement, read_capability
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


def test_the_capability_table_is_checked() -> None:
    parsed = read_capability(Table({"tier": "capable", "modes": ["tool-call"]}, "csma.toml"))
    assert parsed == Capability("capable", modes=("tool-call",))
    assert read_capability(Table({}, "csma.toml")) is None
    with pytest.raises(ConfigError, match="modes"):
        read_capability(Table({"modes": ["telepathy"]}, "csma.toml"))
    with pytest.raises(ConfigError, match="color"):
        read_capability(Table({"color": "blue"}, "csma.toml"))
