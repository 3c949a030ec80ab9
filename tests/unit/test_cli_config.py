"""catsctl serve --config FILE: options from a TOML or JSON file, under the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import main, parse

FILE = """\
cluster = "etcd://127.0.0.1:2379,127.0.0.1:22379"
node-id = "cps2"
netconf-port = 8300
cluster-reads = "local"
netconf-strict = true
feature = ["m:a", "m:b"]
state-dir = "/var/lib/cats"
"""


def _file(tmp_path: Path, text: str, name: str = "serve.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_file_gives_the_options_as_the_command_line_would(tmp_path: Path) -> None:
    args = parse(["serve", "--config", str(_file(tmp_path, FILE))])
    assert args.cluster == "etcd://127.0.0.1:2379,127.0.0.1:22379"
    assert args.node_id == "cps2"
    assert args.netconf_port == 8300
    assert args.cluster_reads == "local"
    assert args.netconf_strict is True
    assert args.feature == ["m:a", "m:b"]
    assert args.state_dir == Path("/var/lib/cats")  # converted as on the command line
    assert args.restconf_port == parse(["serve"]).restconf_port  # what it does not say: default


def test_the_command_line_wins_and_repeatable_options_add(tmp_path: Path) -> None:
    path = str(_file(tmp_path, FILE))
    args = parse(["serve", "--node-id", "cps9", "--config", path, "--feature", "m:c"])
    assert args.node_id == "cps9"
    assert args.feature == ["m:a", "m:b", "m:c"]
    assert args.cluster.startswith("etcd://")


def test_json_by_its_suffix(tmp_path: Path) -> None:
    path = _file(tmp_path, '{"node-id": "cps3", "netconf-port": 0}', "serve.json")
    args = parse(["serve", "--config", str(path)])
    assert (args.node_id, args.netconf_port) == ("cps3", 0)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('clusters = "etcd://a:1"', "clusters: no such option of catsctl serve"),
        ('netconf-port = "eighty"', "netconf-port: invalid literal"),
        ('cluster-reads = "fast"', "cluster-reads: 'fast' is not one of consistent, local"),
        ("netconf-strict = 1", "netconf-strict: takes true or false"),
        ('feature = "m:a"', "feature: takes a list"),
        ("node-id = [1, 2]", "node-id: takes one value"),
        ("node-id = ", "Invalid value"),  # not TOML
    ],
)
def test_a_bad_file_is_refused_naming_file_and_key(
    tmp_path: Path, text: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, text)
    assert main(["serve", "--config", str(path)]) == 1  # before anything starts
    err = capsys.readouterr().err
    assert err.startswith(f"catsctl serve: {path}: ")
    assert said in err


def test_a_missing_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--config", str(tmp_path / "none.toml")]) == 1
    assert "none.toml: No such file or directory" in capsys.readouterr().err
