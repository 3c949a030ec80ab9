"""catsctl validate: the operator-facing validator, run in-process (no sockets)."""

from __future__ import annotations

import pytest

from controller.cli import main
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
