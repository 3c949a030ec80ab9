"""The layer contracts of pyproject.toml (import-linter) hold, and each one fails when broken.

``lint-imports`` runs in the README's test command on the real tree. Here a copy of the
packages gets one forbidden import at a time, and the contract that forbids it must report
BROKEN: a contract that cannot fail would keep nothing.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
SUMMARY = re.compile(r"^(.+) (KEPT|BROKEN)(?: \(\d+ ignored imports?\))?$")

#: (contract name as pyproject.toml writes it, module of the copy, the forbidden import).
BREAKS = [
    (
        "controller.selection is pure decision logic",
        "controller/selection/units.py",
        "from controller.datastore import core",
    ),
    (
        "controller.selection is pure decision logic",
        "controller/selection/mapping/values.py",
        "import libyang",
    ),
    (
        "NETCONF and RESTCONF reach the datastore only through controller.datastore.api",
        "controller/netconf/framing.py",
        "from controller.datastore import core",
    ),
    (
        "NETCONF and RESTCONF never import libyang",
        "controller/restconf/media.py",
        "import libyang",
    ),
    (
        "controller does not import agents",
        "controller/service_metrics/render.py",
        "import agents.sci.values",
    ),
    (
        "controller.sdk is a client",
        "controller/sdk/bulk.py",
        "from controller.datastore import core",
    ),
    (
        "controller.sdk is a client",
        "controller/sdk/errors.py",
        "import controller.netconf.framing",
    ),
    (
        "agents import each other only through agents.common",
        "agents/csma/values.py",
        "import agents.forwarder.values",
    ),
    ("agents.common imports no agent", "agents/common/clock.py", "import agents.sci.values"),
    (
        "no import cycles between the modules of any package",
        "controller/datastore/errors.py",
        "import controller.datastore.core",
    ),
]


def lint(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", "pyproject.toml"],
        cwd=folder,
        env={**os.environ, "COLUMNS": "1000"},  # one summary line per contract
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def verdicts(output: str) -> dict[str, str]:
    """Contract name to KEPT or BROKEN, from lint-imports' summary lines."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        match = SUMMARY.match(line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("layers")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("controller", "agents"):
        shutil.copytree(ROOT / package, folder / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")
    return folder


@pytest.fixture(scope="module")
def pristine(copy: Path) -> subprocess.CompletedProcess[str]:
    return lint(copy)


def test_the_tree_keeps_every_contract(pristine: subprocess.CompletedProcess[str]) -> None:
    assert pristine.returncode == 0, pristine.stdout + pristine.stderr
    assert set(verdicts(pristine.stdout).values()) == {"KEPT"}


@pytest.mark.parametrize(("contract", "module", "statement"), BREAKS)
def test_each_contract_fails_when_broken(
    copy: Path,
    pristine: subprocess.CompletedProcess[str],
    contract: str,
    module: str,
    statement: str,
) -> None:
    target = copy / module
    original = target.read_text(encoding="utf-8")
    target.write_text(f"{original}\n{statement}  # noqa\n", encoding="utf-8")
    try:
        result = lint(copy)
    finally:
        target.write_text(original, encoding="utf-8")
    assert result.returncode != 0
    before = {name: v for name, v in verdicts(pristine.stdout).items() if contract in name}
    after = {name: v for name, v in verdicts(result.stdout).items() if contract in name}
    assert list(before.values()) == ["KEPT"], before  # kept without the import,
    assert list(after.values()) == ["BROKEN"], result.stdout  # broken by it


def test_the_command_entry_imports_agents_only_inside_functions() -> None:
    """controller.cli may import the agents' commands, but not at module level (lazily)."""
    tree = ast.parse((ROOT / "controller" / "cli.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith("agents"), ast.unparse(node)
        if isinstance(node, ast.Import):
            assert not any(alias.name.startswith("agents") for alias in node.names)
