"""``catsctl demo`` as a user runs it: a real process, its exit code and what it prints."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.functional


def test_demo_runs_and_reports_every_example() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "controller.cli", "demo"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for module in (
        "ietf-cats-types",
        "ietf-cats-service-metrics",
        "ietf-cats-sci",
        "ietf-cats-agent-selection",
        "ietf-cats-steering",
    ):
        assert f"{module}@2026-11-30" in out
    assert "FAILED" not in out
    # Scenario A's tables as the draft prints them (service-metrics-op 7.1).
    assert "188.3.67.4:69" in out
    assert "Not built yet" in out
