"""agents.csma.capability: MSG-4 as the C-SMA builds it, checked against the module."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from agents.common.config import ConfigError
from agents.csma.capability import Advertised, Capability, advertisement, read_capability
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
