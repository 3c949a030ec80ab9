"""Every example of yang/examples/ validates with libyang and with yanglint, and every invalid
one is refused by both for the reason recorded in invalid/expected.json."""

from __future__ import annotations

import json
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from controller.model import Schema
from controller.model.examples import Example, check_example, load_examples
from tests.conftest import EXAMPLES_DIR, YANG_DIR

EXAMPLES = load_examples(EXAMPLES_DIR)
MODULE_FILES = [str(path) for path in sorted(YANG_DIR.glob("*@*.yang"))]

REQUIRED_VALID = {
    "scenario-a-tables.data.json",
    "sci-report.rpc.json",
    "step30-descriptor.rpc.json",
    "decision-record.data.json",
    "steering-config.data.json",
}
REQUIRED_INVALID = {
    "reputation-11.data.json",
    "cst-missing-key.data.json",
    "sequence-as-number.rpc.json",
    "unknown-element-class.rpc.json",
}


def test_required_examples_exist() -> None:
    valid = {example.name for example in EXAMPLES if example.expected is None}
    invalid = {example.name for example in EXAMPLES if example.expected is not None}
    assert valid >= REQUIRED_VALID
    assert invalid >= REQUIRED_INVALID
    views = [name for name in valid if "candidate" in name and "view" in name]
    assert views, "the resource views of candidates B and C (agent draft 6.8)"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.name)
def test_libyang_agrees_with_the_example(schema: Schema, example: Example) -> None:
    assert check_example(schema, example) is None


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.name)
def test_yanglint_agrees_with_the_example(example: Example) -> None:
    result = subprocess.run(
        [
            "yanglint",
            "-p",
            str(YANG_DIR),
            "-t",
            example.kind.value,
            *MODULE_FILES,
            str(example.path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if example.expected is None:
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
    else:
        assert result.returncode != 0, f"yanglint accepted {example.name}"
        assert example.expected.message in result.stderr
        assert example.expected.path in result.stderr


def test_an_invalid_example_without_its_reason_is_refused(tmp_path: Path) -> None:
    directory = tmp_path
    (directory / "invalid").mkdir()
    (directory / "invalid" / "x.data.json").write_text("{}")
    (directory / "invalid" / "expected.json").write_text("{}")
    with pytest.raises(ValueError, match="no entry"):
        load_examples(directory)


def test_scenario_a_example_holds_the_draft_tables() -> None:
    """service-metrics-op 7.1: the CST and NST exactly as the draft prints them."""
    data = json.loads((EXAMPLES_DIR / "scenario-a-tables.data.json").read_text())
    cst = {
        (entry["cs-id"], entry["csci-id"]): (
            entry["gas"],
            Decimal(entry["computing-time"]),
            entry["price"],
        )
        for entry in data["ietf-cats-service-metrics:computing-service-table"]["entry"]
    }
    assert cst == {
        ("ARS", "188.3.67.3:67"): (400, Decimal(5), 10),
        ("VRS", "188.3.67.3:68"): (100, Decimal(15), 20),
        ("ARS", "188.3.67.4:69"): (600, Decimal(6), 5),
        ("LLMS", "188.3.67.4:70"): (300, Decimal(12), 15),
    }
    nst = {
        (entry["ingress"], entry["egress"]): Decimal(entry["network-delay"])
        for entry in data["ietf-cats-service-metrics:network-service-table"]["entry"]
    }
    assert nst == {
        ("10.0.0.1", "188.3.67.3"): Decimal(8),
        ("10.0.0.1", "188.3.67.4"): Decimal(6),
    }
