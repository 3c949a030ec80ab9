"""``catsctl gateway --check`` and its refusals (exit status 2, nothing sent)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cli import main
from tests.unit.gateway.test_description import EXAMPLE, example


@pytest.fixture(autouse=True)
def _libyang_log_level() -> Iterator[None]:
    """The gateway quiets libyang's logger; give the other tests theirs back."""
    logger = logging.getLogger("libyang")
    level = logger.level
    yield
    logger.setLevel(level)


def test_the_shipped_example_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gateway", "--check", str(EXAMPLE)]) == 0
    assert "valid description, 1 sessions, 5 requests" in capsys.readouterr().out


def test_a_bad_description_exits_2_naming_file_and_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = example()
    document["sessions"][0]["descriptor"]["capability-tier"] = "not a tier!"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    # no C-PS listens on port 9: had anything been sent, the status would be 1
    assert main(["gateway", str(path), "--cps-url", "http://127.0.0.1:9/restconf"]) == 2
    err = capsys.readouterr().err
    assert f"catsctl gateway: {path}: sessions[0].descriptor: submit-descriptor:" in err
    assert "descriptor/capability-tier" in err


def test_a_bad_flag_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gateway", "--check", str(EXAMPLE), "--netconf", "nowhere"]) == 2
    assert "--netconf: expected host:port" in capsys.readouterr().err
    missing = tmp_path / "missing"
    assert main(["gateway", str(EXAMPLE), "--password-file", str(missing)]) == 2
    assert "--password-file: cannot read password file" in capsys.readouterr().err
