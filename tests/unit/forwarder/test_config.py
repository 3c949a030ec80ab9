"""agents.forwarder.config: the example validates against cats-forwarder-config; libyang's
refusals name the file, the data path and the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.common.config import ConfigError
from agents.forwarder.config import Role, load_config, with_overrides
from agents.forwarder.values import Locator

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"
TOP = "/cats-forwarder-config:forwarder"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("forwarder*.toml")), ids=lambda p: p.name)
def test_the_examples_are_valid(path: Path) -> None:
    config = load_config(path)
    assert config.users
    assert config.state_dir.is_relative_to(path.parent)


def test_the_example_says_what_the_readme_says() -> None:
    config = load_config(EXAMPLES / "forwarder.toml")
    assert (config.forwarder_id, config.roles) == ("192.0.2.1", frozenset({Role.INGRESS}))
    assert config.tunnels == {"198.51.100.7": Locator("127.0.0.1", 8901)}
    assert config.default_routes == {"ARS": Locator("127.0.0.1", 8800)}
    assert (config.server.netconf_port, config.data_plane.port) == (8832, 8900)
    assert (config.data_plane.connect_timeout, config.data_plane.read_timeout) == (1.0, 30.0)


def test_the_module_defaults_apply(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_text('role = "egress"\n', encoding="utf-8")
    config = load_config(path)
    assert config.roles == frozenset({Role.EGRESS})
    assert (config.data_plane.threads, config.data_plane.read_timeout) == (32, 30.0)
    assert (config.server.address, config.server.restconf_port) == ("127.0.0.1", 8182)


def _refusal(tmp_path: Path, document: dict[str, Any]) -> tuple[str, str]:
    path = tmp_path / "f.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    item = refused.value.items[0]
    assert item.message.startswith(f"{path}: ")
    return str(item.path), item.message


@pytest.mark.parametrize(
    ("document", "path", "reason"),
    [
        ({"rol": ["ingress"]}, TOP, 'Node "rol" not found'),
        ({"role": ["core"]}, f"{TOP}/role", "Invalid enumeration value"),
        (
            {"egress": [{"forwarder-id": "e1", "address": "h:1"}]},
            f"{TOP}/egress[forwarder-id='e1']/address",
            "Unsatisfied pattern",
        ),
        ({"data-plane": {"listen": "nowhere"}}, f"{TOP}/data-plane/listen", "pattern"),
        ({"data-plane": {"threads": 0}}, f"{TOP}/data-plane/threads", "Unsatisfied range"),
        (
            {"data-plane": {"read-timeout-ms": 0}},
            f"{TOP}/data-plane/read-timeout-ms",
            "Unsatisfied range",
        ),
        ({"data-plane": {"read-timeout": 30}}, f"{TOP}/data-plane", 'Node "read-timeout"'),
        ({"users": [{"name": "cps"}]}, f"{TOP}/users[name='cps']", "password"),
        (
            {"users": [{"name": "cps", "password": "a", "password-hash": "$6$salt$hash"}]},
            f"{TOP}/users[name='cps']/password-hash",
            "exactly one of password and password-hash",
        ),
        ({"forwarder-id": "1bad id"}, f"{TOP}/forwarder-id", "Invalid union value"),
    ],
)
def test_a_bad_value_is_refused_naming_path_and_reason(
    tmp_path: Path, document: dict[str, Any], path: str, reason: str
) -> None:
    where, message = _refusal(tmp_path, document)
    assert where == path
    assert reason in message


def test_flags_override_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_text("", encoding="utf-8")
    config = load_config(path)
    changed = with_overrides(
        config,
        forwarder_id="10.0.0.1",
        roles=frozenset({Role.EGRESS}),
        listen=("127.0.0.2", 9000),
        netconf_port=1830,
    )
    assert (changed.forwarder_id, changed.roles) == ("10.0.0.1", frozenset({Role.EGRESS}))
    assert (changed.data_plane.address, changed.data_plane.port) == ("127.0.0.2", 9000)
    assert changed.server.netconf_port == 1830
    with pytest.raises(ConfigError):
        with_overrides(config, forwarder_id="not an id")
