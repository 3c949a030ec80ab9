"""Strict validation of the C-NMA configuration: refusals name the file and the key."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agents.cnma.config import DelayUnit, load_config, with_overrides
from agents.cnma.paths import PathMetric
from agents.cnma.probe import ProbeMethod, ProbeUse
from agents.common.config import ConfigError
from tests.unit.cnma.conftest import EXAMPLE

CF3 = "188.3.67.4"


def example_document() -> dict[str, Any]:
    return tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))


def write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "cnma.json"
    path.write_text(json.dumps(document, indent=1))
    return path


def refusal(tmp_path: Path, document: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, document))
    item = caught.value.items[0]
    return f"{item.path} | {item.message}"


def test_example_loads_with_its_settings() -> None:
    config = load_config(EXAMPLE)
    assert config.source == "cnma-7.1"
    assert config.cps.username == "cnma"
    assert config.cps.password is None
    assert config.policy.metric is PathMetric.IGP
    assert config.reporting.delay_unit is DelayUnit.MS
    assert (config.reporting.interval, config.reporting.heartbeat) == (5.0, 60.0)
    assert config.reporting.thresholds.delay_absolute == 500
    assert len(config.topology.links) == 8  # four bidirectional links
    assert config.topology.ingresses == ("10.0.0.1",)
    assert config.topology.egresses == ("188.3.67.3", "188.3.67.4")
    assert next(c.csci_id for c in config.topology.candidates) == "188.3.67.3:67"


def test_json_and_toml_give_the_same_configuration(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, example_document())) == load_config(EXAMPLE)


def _set(document: dict[str, Any], where: str, value: Any) -> dict[str, Any]:
    target: Any = document
    *parents, last = where.split("/")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is KeyError:
        del target[int(last) if last.isdigit() else last]
    else:
        target[int(last) if last.isdigit() else last] = value
    return document


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        ("topology/links/1/delay", -1, "topology.links[1].delay | expected a non-negative"),
        ("topology/links/1/delay", "fast", "topology.links[1].delay | expected a non-negative"),
        ("topology/links/1/delay", 0.0005, "topology.links[1].delay | 0.0005 ms is not a whole"),
        ("topology/links/1/delay", KeyError, "topology.links[1].delay | missing"),
        ("topology/links/0/to", "P9", "topology.links[0].to | no node 'P9'"),
        ("topology/links/0/loss", 2_000_000, "topology.links[0].loss | expected an integer"),
        ("topology/links/0/admin-group", "0xZZ", "topology.links[0].admin-group | expected"),
        ("topology/links/0/colour", 1, "topology.links[0].colour | unknown key"),
        ("topology/links/1/min-delay", 9, "topology.links[1].min-delay | min-delay exceeds"),
        ("topology/nodes/1/role", "core", "topology.nodes[1].role | expected one of ingress"),
        ("topology/nodes/1/id", "10.0.0.1", "topology.nodes[1].id | duplicate node"),
        ("topology/nodes/1/id", "9bad", "topology.nodes[1].id | not an IP address or ident"),
        ("topology/endpoints/0/prefix", "203.0.113.1/24", "endpoints[0].prefix | not an IP"),
        ("topology/candidates/0/egress", "P1", "candidates[0].egress | 'P1' is not an egress"),
        ("reporting/heartbeat", 1, "reporting.heartbeat | the heartbeat must not be shorter"),
        ("reporting/delay-unit", "ns", "reporting.delay-unit | expected one of ms, us"),
        ("paths/metric", "cost", "paths.metric | expected one of igp, te, delay, hops"),
        ("cps/url", "ftp://x", "cps.url | expected an http:// or https://"),
        ("cps/password-file", "missing.pw", "cps.password-file | cannot read password file"),
        ("topology", KeyError, "cnma.json: topology | missing"),
        ("extra", 1, "cnma.json: extra | unknown key"),
    ],
)
def test_malformed_configuration_names_the_key(
    tmp_path: Path, where: str, value: Any, expected: str
) -> None:
    assert expected in refusal(tmp_path, _set(example_document(), where, value))


def test_duplicate_link_is_refused(tmp_path: Path) -> None:
    document = example_document()
    document["topology"]["links"].append({"from": "P1", "to": "10.0.0.1", "delay": 1})
    assert "topology.links[4].to | duplicate link P1 -> 10.0.0.1" in refusal(tmp_path, document)


def test_probes_are_validated(tmp_path: Path) -> None:
    probe: dict[str, Any] = {"ingress": "10.0.0.1", "egress": CF3, "target": "127.0.0.1:7007"}
    document = example_document() | {"probes": [probe | {"use": "bound", "count": 3}]}
    (loaded,) = load_config(write(tmp_path, document)).probes
    assert (loaded.host, loaded.port, loaded.count) == ("127.0.0.1", 7007, 3)
    assert (loaded.method, loaded.use) == (ProbeMethod.UDP_ECHO, ProbeUse.BOUND)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"target": "127.0.0.1"}, "probes[0].target | expected host:port"),
        ({"egress": "P1"}, "probes[0].egress | 'P1' is not an egress node"),
        ({"method": "icmp"}, "probes[0].method | expected one of udp-echo, tcp-connect"),
        ({"count": 0}, "probes[0].count | a probe sends at least one round trip"),
    ]
    for bad, expected in cases:
        assert expected in refusal(tmp_path, example_document() | {"probes": [probe | bad]})


def test_syntax_errors_give_the_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n "name": "x",\n "topology": {\n}}}\n')
    with pytest.raises(ConfigError) as caught:
        load_config(broken)
    assert caught.value.items[0].path == f"{broken}:4"
    toml = tmp_path / "broken.toml"
    toml.write_text('name = "x"\n[topology\n')
    with pytest.raises(ConfigError, match="line 2"):
        load_config(toml)


def test_password_file_is_relative_to_the_configuration(tmp_path: Path) -> None:
    (tmp_path / "cnma.password").write_text("s3cret\nignored\n")
    document = _set(example_document(), "cps/password-file", "cnma.password")
    assert load_config(write(tmp_path, document)).cps.password == "s3cret"


def test_flags_override_the_file() -> None:
    config = with_overrides(load_config(EXAMPLE), url="http://h:1/restconf/", heartbeat=10)
    assert (config.cps.url, config.reporting.heartbeat) == ("http://h:1/restconf", 10)
    with pytest.raises(ConfigError, match="heartbeat"):
        with_overrides(config, heartbeat=1)
