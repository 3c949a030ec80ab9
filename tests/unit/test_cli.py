"""catsctl validate: the operator-facing validator, run in-process (no sockets)."""

from __future__ import annotations

import pytest

from controller.cli import build_parser, main
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
