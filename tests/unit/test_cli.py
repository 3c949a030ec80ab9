"""catsctl validate: the operator-facing validator, run in-process (no sockets)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from controller.cli import COMMAND_MODULES, build_parser, main
from tests.conftest import EXAMPLES_DIR


def test_validate_accepts_a_valid_example(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "-t", "data", str(EXAMPLES_DIR / "scenario-a-tables.data.json")])
    assert code == 0
    assert "valid data" in capsys.readouterr().out


def test_validate_names_the_offending_path(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["validate", "-t", "data", str(EXAMPLES_DIR / "invalid" / "reputation-11.data.json")]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "reputation" in err
    assert "invalid-value" in err


def test_serve_takes_repeatable_plugins(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["serve", "--plugin", "a.b", "--plugin", "c"])
    assert args.plugin == ["a.b", "c"]
    assert build_parser().parse_args(["serve"]).plugin == []
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    usage = " ".join(capsys.readouterr().out.split())
    assert "--plugin MODULE" in usage
    assert "register(registrations) -> None" in usage


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(found.choices)


def test_serve_counts_are_zero_or_more(capsys: pytest.CaptureFixture[str]) -> None:
    """``--restconf-workers`` and ``--cluster-log-keep``: 0 is a choice, a negative is an
    error named by the option (not a silent 0)."""
    args = build_parser().parse_args(["serve", "--restconf-workers", "2"])
    assert (args.restconf_workers, build_parser().parse_args(["serve"]).restconf_workers) == (2, 0)
    for option in ("--restconf-workers", "--cluster-log-keep"):
        assert (
            getattr(build_parser().parse_args(["serve", option, "0"]), option[2:].replace("-", "_"))
            == 0
        )
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", option, "-1"])
        assert f"argument {option}: -1 is not 0 or more" in capsys.readouterr().err


def test_a_command_line_builds_its_own_command_and_the_help_every_one() -> None:
    every = _commands(build_parser())
    assert set(every) == set(COMMAND_MODULES) | {"validate", "hash-password"}
    for command in COMMAND_MODULES:
        alone = _commands(build_parser(command))
        assert command in alone, command
        assert "validate" not in alone, command
        # the same options as in the full parser
        ours, theirs = alone[command], every[command]
        assert sorted(a.dest for a in ours._actions) == sorted(a.dest for a in theirs._actions)


def test_an_agent_command_line_loads_no_server_stack() -> None:
    code = (
        "import sys, controller.cli; controller.cli.build_parser('csma'); "
        "print(sorted(m for m in ('controller.netconf.server', 'controller.operator.client',"
        " 'requests', 'controller.cli_serve') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("agent", ["csma", "cnma"])
def test_agent_heartbeat_flags_are_milliseconds(
    agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--heartbeat-ms as the config leaf reporting/heartbeat-ms; the old --heartbeat (seconds)
    is refused, not taken as an abbreviation of --heartbeat-ms and read 1000 times shorter."""
    args = build_parser().parse_args([agent, "--config", "x.toml", "--heartbeat-ms", "20000"])
    assert args.heartbeat_ms == 20_000
    with pytest.raises(SystemExit):
        build_parser().parse_args([agent, "--config", "x.toml", "--heartbeat", "20"])
    assert "unrecognized arguments: --heartbeat 20" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "flag", "dest"),
    [
        (["sci", "--config", "x"], "--forward-timeout-ms", "forward_timeout_ms"),
        (["gateway", "session.json"], "--timeout-ms", "timeout_ms"),
    ],
)
def test_agent_timeouts_are_milliseconds(
    command: list[str], flag: str, dest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old seconds flags (--forward-timeout, --timeout) are refused, not taken as an
    abbreviation of the milliseconds flag and read 1000 times shorter."""
    args = build_parser().parse_args([*command, flag, "2500"])
    assert getattr(args, dest) == 2500
    old = flag.removesuffix("-ms")
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, old, "2"])
    assert f"unrecognized arguments: {old} 2" in capsys.readouterr().err
