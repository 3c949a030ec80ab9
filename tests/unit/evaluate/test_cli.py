"""``catsctl evaluate`` end to end on a slice of the shipped trace (one worker, no sockets)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import main
from controller.evaluate import shipped


@pytest.fixture
def small_trace(tmp_path: Path) -> Path:
    lines = shipped.DEFAULT_TRACE.read_text().splitlines()[:80]
    path = tmp_path / "slice.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_evaluate_prints_the_table_and_writes_results_and_figures(
    small_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    options = {
        "--trace": str(small_trace),
        "--policies": "nearest,least-loaded,cats,oracle",
        "--loads": "0.7",
        "--intervals": "1,10",
        "--jobs": "1",
        "--out": str(out),
    }
    code = main(["evaluate", "--quiet", *(x for pair in options.items() for x in pair)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "policy" in printed.splitlines()[0]
    assert any(line.startswith("cats ") for line in printed.splitlines())
    results = json.loads((out / "results.json").read_text())
    assert {r["policy"] for r in results["loads"]} == {"nearest", "least-loaded", "cats", "oracle"}
    swept = {(r["policy"], r["reporting-interval-s"]) for r in results["reporting-intervals"]}
    assert ("cats", 10.0) in swept
    assert ("least-loaded", 10.0) in swept
    assert all(r["requests"] == 80 for r in results["loads"])
    for name in ("ttft-cdf.png", "p99-vs-load.png", "p99-vs-interval.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "table.md").read_text().startswith("| load | policy |")
    summary = printed.splitlines()[-1]  # CPU beside wall time, with the load it ran under
    assert re.fullmatch(
        r"6 runs in \d+ s; CPU \d+ s \(command \d+ s, workers \d+ s\); "
        r"load average [\d.]+ [\d.]+ [\d.]+ on \d+ cores",
        summary,
    ), summary


def test_an_invalid_policy_file_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(
        '{"ietf-cats-service-metrics:update-control": {"dispatch-accounting": {"enabled": 3}}}'
    )
    code = main(["evaluate", "--policy-config", str(policy), "--out", str(tmp_path / "o")])
    assert code == 1
    error = capsys.readouterr().err
    assert str(policy) in error
    assert "enabled" in error
    assert not (tmp_path / "o").exists()


def test_the_command_line_names_every_policy_the_evaluation_builds() -> None:
    from controller.evaluate import policies  # noqa: PLC0415

    assert tuple(policies._BUILD) == shipped.ALL
    assert "cats-steer" not in shipped.NAMES


def test_building_the_command_line_loads_no_simulator() -> None:
    code = (
        "import sys, controller.cli; controller.cli.build_parser(); "
        "print(sorted(m for m in sys.modules if m.startswith('controller.evaluate.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['controller.evaluate.cli', 'controller.evaluate.shipped']"
