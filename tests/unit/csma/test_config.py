"""agents.csma.config: the example validates against cats-csma-config; libyang's refusals
name the data path and the reason, the file in the message."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from agents.common.config import ConfigError
from agents.csma.config import Aggregation, Role, load_config, with_overrides
from agents.csma.stateview import Presence
from controller.types import CsId
from tests.conftest import DOCS_DIR

EXAMPLE = DOCS_DIR / "examples" / "csma.toml"


def test_the_example_configuration_is_valid() -> None:
    config = load_config(EXAMPLE)
    assert (config.name, config.site, config.site_csci_id) == ("csma-ss3", "SS3", "188.3.67.3:67")
    assert config.cps.password == "change-me"
    assert config.reporting.aggregation is Aggregation.PER_SCI
    assert [u.role for u in config.users] == [Role.SCI, Role.SCI, Role.CPS]
    assert config.users[0].may_report("188.3.67.3:67")
    assert not config.users[0].may_report("188.3.67.3:68")
    (seed,) = config.instances[0].state
    assert (seed.presence, seed.residency, seed.retention) == (
        Presence.PRESENT,
        "accelerator-memory",
        600,
    )
    assert config.state_dir == EXAMPLE.parent / "csma-ss3-state"
    assert (config.reporting.interval, config.reporting.heartbeat) == (1.0, 20.0)
    assert (config.reservations.validity, config.advertising.interval) == (30.0, 30.0)


def test_the_module_defaults_apply(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, {"site": "SS1"}))
    assert (config.reporting.interval, config.reporting.min_interval) == (1.0, 0.1)
    assert (config.reporting.thresholds.gas_absolute, config.cps.timeout) == (50, 5.0)
    assert (config.server.restconf_port, config.reservations.window) == (8180, 60.0)
    assert config.name == "csma-SS1"


def _write(tmp_path: Path, document: dict[str, object]) -> Path:
    path = tmp_path / "csma.json"
    path.write_text(json.dumps(document))
    return path


TOP = "/cats-csma-config:csma"
_STATE = {"tenant": "t", "reuse-key": "k"}
_ENTRY = f"{TOP}/instances[csci-id='x']/state[tenant='t'][reuse-key='k']"


def _instance(**state: object) -> dict[str, object]:
    return {"instances": [{"csci-id": "x", "cs-id": "A", "state": [_STATE | state]}]}


@pytest.mark.parametrize(
    ("document", "where", "reason"),
    [
        ({}, f"{TOP}/site", "Mandatory node"),
        ({"site": "SS1", "colour": 1}, TOP, 'Node "colour" not found'),
        (
            {"site": "SS1", "reporting": {"heartbeat-ms": 0}},
            f"{TOP}/reporting/heartbeat-ms",
            "range",
        ),
        ({"site": "SS1", "reporting": {"heartbeat": 20}}, f"{TOP}/reporting", '"heartbeat" not'),
        (
            {"site": "SS1", "reporting": {"aggregation": "per-pod"}},
            f"{TOP}/reporting/aggregation",
            "Invalid enumeration value",
        ),
        (
            {"site": "SS1", "reporting": {"thresholds": {"gas-absolute": -1}}},
            f"{TOP}/reporting/thresholds/gas-absolute",
            "out of type uint32",
        ),
        ({"site": "SS1", "users": [{"name": "a", "role": "sci"}]}, f"{TOP}/users[name='a']", ""),
        (
            {"site": "SS1", "users": [{"name": "a", "password": "p", "role": "root"}]},
            f"{TOP}/users[name='a']/role",
            "Invalid enumeration value",
        ),
        (
            {"site": "SS1", **_instance(presence="absent", residency="host-memory")},
            f"{_ENTRY}/residency",
            "When condition",
        ),
        ({"site": "SS1", **_instance(residency="floppy")}, f"{_ENTRY}/residency", "enumeration"),
        ({"site": "SS1", **_instance(**{"retention-ms": 1500})}, f"{_ENTRY}/retention-ms", "whole"),
        ({"site": "SS1", "cps": {"url": "ftp://x"}}, f"{TOP}/cps/url", "pattern"),
        (
            {"site": "SS1", "reporting": {"computing-time-estimate": 0}},
            f"{TOP}/reporting/computing-time-estimate",
            "range",
        ),
        (
            {
                "site": "SS1",
                "reporting": {"computing-time-estimates": [{"cs-id": "ARS", "estimate": "1.0005"}]},
            },
            f"{TOP}/reporting/computing-time-estimates[cs-id='ARS']/estimate",
            "",
        ),
        (
            {"site": "SS1", "reporting": {"computing-time-estimate": "1e30"}},
            f"{TOP}/reporting/computing-time-estimate",
            "",
        ),
    ],
)
def test_a_bad_value_is_refused_naming_path_and_reason(
    tmp_path: Path, document: dict[str, object], where: str, reason: str
) -> None:
    path = _write(tmp_path, document)
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    item = refused.value.items[0]
    assert item.path == where
    assert item.message.startswith(f"{path}: ")
    assert reason in item.message


def test_computing_time_estimates_per_service_and_site_wide(tmp_path: Path) -> None:
    reporting = {
        "computing-time-estimate": 80,
        "computing-time-estimates": [{"cs-id": "ARS", "estimate": "45.5"}],
    }
    config = load_config(_write(tmp_path, {"site": "SS1", "reporting": reporting}))
    estimates = config.reporting.estimates
    assert estimates.computing_time(CsId("ARS")) == Decimal("45.5")
    assert estimates.computing_time(CsId("LLM")) == Decimal(80)
    bare = load_config(_write(tmp_path, {"site": "SS1"}))
    assert bare.reporting.estimates.computing_time(CsId("ARS")) is None


def test_overrides_of_the_command_line() -> None:
    config = with_overrides(
        load_config(EXAMPLE), url="http://cps:1/restconf/", username="u", heartbeat_ms=2000
    )
    assert (config.cps.url, config.cps.username, config.reporting.heartbeat) == (
        "http://cps:1/restconf",
        "u",
        2.0,
    )
    with pytest.raises(ConfigError, match="--heartbeat-ms"):
        with_overrides(config, heartbeat_ms=0)
