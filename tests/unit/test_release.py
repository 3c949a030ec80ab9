"""What a released project carries: its licence as pyproject states it, a changelog naming the
version, systemd units that verify, and ``--help`` that shows defaults and names no file outside
the repository."""

from __future__ import annotations

import configparser
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from controller import __version__
from controller.cli import build_parser, main
from tests.conftest import ROOT

UNITS = sorted((ROOT / "deploy" / "systemd").glob("*.service"))
LONG_RUNNING = ("serve", "sci", "csma", "cnma", "forwarder")


def test_the_licence_file_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "BSD-3-Clause"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Neither the name of the copyright holder" in text  # the third clause


def test_the_changelog_and_catsctl_name_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == __version__
    assert f"## [{__version__}]" in (ROOT / "CHANGELOG.md").read_text()
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"catsctl {__version__}"


@pytest.mark.parametrize("command", [*LONG_RUNNING, "show", "config", "audit", "explain"])
def test_help_shows_defaults_and_names_nothing_outside_the_repository(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for outside in ("../shared", "/work/", "DESIGN.md", "specs/"):
        assert outside not in text
    if command in LONG_RUNNING:
        assert "--metrics-address" in text
        assert "--log-format" in text
    if command == "serve":
        for shown in ("(default: 8080)", "(default: 8830)", "(default: 1000)", "(default: state)"):
            assert shown in text


def test_a_unit_per_long_running_process() -> None:
    assert [unit.stem for unit in UNITS] == sorted(f"cats-{name}" for name in LONG_RUNNING)


@pytest.mark.parametrize("unit", UNITS, ids=lambda path: path.name)
def test_each_unit_runs_catsctl_as_its_parser_accepts_and_stops_with_sigterm(unit: Path) -> None:
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(unit)
    service = parser["Service"]
    assert service["KillSignal"] == "SIGTERM"
    assert service["UMask"] == "0077"
    assert service["StateDirectoryMode"] == "0700"
    assert parser["Install"]["WantedBy"] == "multi-user.target"
    program, *arguments = shlex.split(service["ExecStart"])
    assert program.endswith("/catsctl")
    args = build_parser().parse_args(arguments)
    assert args.command == unit.stem.removeprefix("cats-")


def test_systemd_analyze_verifies_the_units(tmp_path: Path) -> None:
    catsctl = Path(sys.executable).parent / "catsctl"
    for unit in UNITS:  # ExecStart must name an executable that exists here
        text = re.sub(r"/usr/local/bin/catsctl", str(catsctl), unit.read_text())
        (tmp_path / unit.name).write_text(text)
    result = subprocess.run(
        ["systemd-analyze", "verify", *(str(tmp_path / unit.name) for unit in UNITS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""
