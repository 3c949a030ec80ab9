"""The C-NMA configuration validated against cats-cnma-config: libyang's refusals name the
data path and the reason, the file in the message."""

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


TOP = "/cats-cnma-config:cnma"
LINK0 = f"{TOP}/topology/links[from='10.0.0.1'][to='P1']"
LINK1 = f"{TOP}/topology/links[from='P1'][to='188.3.67.3']"
PROBE = f"{TOP}/probes[ingress='10.0.0.1'][egress='{CF3}']"


@pytest.mark.parametrize(
    ("where", "value", "path", "reason"),
    [
        ("topology/links/1/delay", -1, f"{LINK1}/delay", "range"),
        ("topology/links/1/delay", "fast", f"{LINK1}/delay", "Invalid"),
        ("topology/links/1/delay", 0.0005, f"{LINK1}/delay", "digits"),
        (
            "topology/links/0/delay",
            KeyError,
            f"{TOP}/topology/links/delay",
            'Mandatory node "delay"',
        ),
        ("topology/links/0/to", "P9", f"{TOP}/topology/links[from='10.0.0.1'][to='P9']/to", "P9"),
        ("topology/links/0/loss", 2_000_000, f"{LINK0}/loss", "range"),
        ("topology/links/0/admin-group", "0xZZ", f"{LINK0}/admin-group", "Invalid union"),
        ("topology/links/0/colour", 1, LINK0, 'Node "colour" not found'),
        ("topology/links/1/min-delay", 9, f"{LINK1}/min-delay", "min-delay exceeds delay"),
        ("topology/nodes/1/role", "core", f"{TOP}/topology/nodes[id='P1']/role", "enumeration"),
        (  # libyang's path of a duplicate list entry lacks its parent's name
            "topology/nodes/1/id",
            "10.0.0.1",
            "/cats-cnma-config:topology/nodes[id='10.0.0.1']",
            "Duplicate instance",
        ),
        ("topology/nodes/1/id", "9bad", f"{TOP}/topology/nodes/id", "Invalid union"),
        (
            "topology/candidates/0/egress",
            "P1",
            f"{TOP}/topology/candidates[csci-id='188.3.67.3:67']/egress",
            "the candidate's egress is not an egress node",
        ),
        ("reporting/heartbeat-ms", 1, f"{TOP}/reporting/heartbeat-ms", "must not be shorter"),
        ("reporting/heartbeat", 60, f"{TOP}/reporting", 'Node "heartbeat" not found'),
        ("reporting/delay-unit", "ns", f"{TOP}/reporting/delay-unit", "enumeration"),
        ("paths/metric", "cost", f"{TOP}/paths/metric", "enumeration"),
        ("cps/url", "ftp://x", f"{TOP}/cps/url", "pattern"),
        ("cps/password-file", "missing.pw", f"{TOP}/cps/password-file", "cannot read password"),
        ("topology", KeyError, f"{TOP}/topology/nodes", "Too few"),
        ("extra", 1, TOP, 'Node "extra" not found'),
    ],
)
def test_a_bad_value_is_refused_naming_path_and_reason(
    tmp_path: Path, where: str, value: Any, path: str, reason: str
) -> None:
    assert refusal(tmp_path, _set(example_document(), where, value)).startswith(f"{path} | ")
    assert reason in refusal(tmp_path, _set(example_document(), where, value))


def test_duplicate_link_is_refused(tmp_path: Path) -> None:
    document = example_document()
    document["topology"]["links"].append({"from": "P1", "to": "10.0.0.1", "delay": 1})
    found = refusal(tmp_path, document)
    assert found.startswith(f"{TOP}/topology/links[from='P1'][to='10.0.0.1'] | ")
    assert "duplicate link P1 -> 10.0.0.1" in found


def test_probes_are_validated(tmp_path: Path) -> None:
    probe: dict[str, Any] = {"ingress": "10.0.0.1", "egress": CF3, "target": "127.0.0.1:7007"}
    document = example_document() | {"probes": [probe | {"use": "bound", "count": 3}]}
    (loaded,) = load_config(write(tmp_path, document)).probes
    assert (loaded.host, loaded.port, loaded.count) == ("127.0.0.1", 7007, 3)
    assert (loaded.method, loaded.use, loaded.timeout) == (
        ProbeMethod.UDP_ECHO,
        ProbeUse.BOUND,
        0.5,
    )
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"target": "127.0.0.1"}, f"{PROBE}/target", "pattern"),
        (
            {"egress": "P1"},
            f"{TOP}/probes[ingress='10.0.0.1'][egress='P1']/egress",
            "not an egress",
        ),
        ({"method": "icmp"}, f"{PROBE}/method", "enumeration"),
        ({"count": 0}, f"{PROBE}/count", "range"),
        ({"timeout": 0.5}, PROBE, 'Node "timeout" not found'),
    ]
    for bad, path, reason in cases:
        found = refusal(tmp_path, example_document() | {"probes": [probe | bad]})
        assert found.startswith(f"{path} | ")
        assert reason in found


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
    """--heartbeat-ms is milliseconds, as reporting/heartbeat-ms; below interval-ms (5000 in
    the example) it is refused naming the flag."""
    config = with_overrides(load_config(EXAMPLE), url="http://h:1/restconf/", heartbeat_ms=10_000)
    assert (config.cps.url, config.reporting.heartbeat) == ("http://h:1/restconf", 10.0)
    with pytest.raises(ConfigError, match=r"--heartbeat-ms.*interval-ms \(5000\)"):
        with_overrides(config, heartbeat_ms=1000)
