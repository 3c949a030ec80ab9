"""agents.forwarder.config: the example validates; refusals name the file and key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.common.config import ConfigError, Table
from agents.forwarder.config import Role, load_config, parse_config, with_overrides
from agents.forwarder.values import Locator

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"


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


def _refusal(document: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as refused:
        parse_config(Table(document, "f.toml"), Path())
    return str(refused.value.items[0].path)


def test_refusals_name_the_key() -> None:
    assert _refusal({"rol": ["ingress"]}) == "f.toml: rol"
    assert _refusal({"role": ["core"]}) == "f.toml: role"
    assert _refusal({"egress": [{"forwarder-id": "e1", "address": "h:1"}]}) == (
        "f.toml: egress[0].address"
    )
    assert _refusal({"data-plane": {"listen": "nowhere"}}) == "f.toml: data-plane.listen"
    assert _refusal({"users": [{"name": "cps"}]}) == "f.toml: users[0].password"
    assert _refusal({"forwarder-id": "1bad id"}) == "f.toml: forwarder-id"


def test_flags_override_the_file() -> None:
    config = parse_config(Table({}, "f.toml"), Path())
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
