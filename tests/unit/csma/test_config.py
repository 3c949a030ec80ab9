"""agents.csma.config: the example validates; every refusal names the file and key."""

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


def _write(tmp_path: Path, document: dict[str, object]) -> Path:
    path = tmp_path / "csma.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({}, "site"),
        ({"site": "SS1", "colour": 1}, "colour"),
        ({"site": "SS1", "reporting": {"heartbeat": 0}}, "reporting.heartbeat"),
        ({"site": "SS1", "reporting": {"aggregation": "per-pod"}}, "reporting.aggregation"),
        (
            {"site": "SS1", "reporting": {"thresholds": {"gas-absolute": -1}}},
            "reporting.thresholds.gas-absolute",
        ),
        ({"site": "SS1", "users": [{"name": "a", "role": "sci"}]}, "users[0].password"),
        (
            {"site": "SS1", "users": [{"name": "a", "password": "p", "role": "root"}]},
            "users[0].role",
        ),
        (
            {
                "site": "SS1",
                "instances": [
                    {
                        "csci-id": "x",
                        "cs-id": "A",
                        "state": [
                            {
                                "tenant": "t",
                                "reuse-key": "k",
                                "presence": "absent",
                                "residency": "host-memory",
                            }
                        ],
                    }
                ],
            },
            "instances[0].state[0].residency",
        ),
        (
            {
                "site": "SS1",
                "instances": [
                    {
                        "csci-id": "x",
                        "cs-id": "A",
                        "state": [{"tenant": "t", "reuse-key": "k", "residency": "floppy"}],
                    }
                ],
            },
            "instances[0].state[0].residency",
        ),
        ({"site": "SS1", "cps": {"url": "ftp://x"}}, "cps.url"),
        (
            {"site": "SS1", "reporting": {"computing-time-estimate": 0}},
            "reporting.computing-time-estimate",
        ),
        (
            {"site": "SS1", "reporting": {"computing-time-estimates": {"ARS": "1.0005"}}},
            "reporting.computing-time-estimates.ARS",
        ),
        (
            {"site": "SS1", "reporting": {"computing-time-estimate": "1e30"}},
            "reporting.computing-time-estimate",
        ),
    ],
)
def test_refusals_name_the_key(tmp_path: Path, document: dict[str, object], where: str) -> None:
    path = _write(tmp_path, document)
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert refused.value.items[0].path == f"{path}: {where}"


def test_computing_time_estimates_per_service_and_site_wide(tmp_path: Path) -> None:
    reporting = {"computing-time-estimate": 80, "computing-time-estimates": {"ARS": "45.5"}}
    config = load_config(_write(tmp_path, {"site": "SS1", "reporting": reporting}))
    estimates = config.reporting.estimates
    assert estimates.computing_time(CsId("ARS")) == Decimal("45.5")
    assert estimates.computing_time(CsId("LLM")) == Decimal(80)
    bare = load_config(_write(tmp_path, {"site": "SS1"}))
    assert bare.reporting.estimates.computing_time(CsId("ARS")) is None


def test_overrides_of_the_command_line() -> None:
    config = with_overrides(
        load_config(EXAMPLE), url="http://cps:1/restconf/", username="u", heartbeat=2.0
    )
    assert (config.cps.url, config.cps.username, config.reporting.heartbeat) == (
        "http://cps:1/restconf",
        "u",
        2.0,
    )
    with pytest.raises(ConfigError):
        with_overrides(config, heartbeat=0)
