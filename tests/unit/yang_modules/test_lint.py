"""Every module is clean under the IETF linter and yanglint, and named MODULE@REVISION."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from controller.model import AGENT_MODULES, CATS_MODULES, PRODUCT_MODULES
from tests.conftest import YANG_DIR
from tools.yang_tree import pyang_command

OWN_MODULES = PRODUCT_MODULES + AGENT_MODULES

MODULE_FILES = sorted(YANG_DIR.glob("*@*.yang"))


def _name(module_file: Path) -> str:
    return module_file.name.split("@")[0]


def test_the_five_cats_modules_the_products_and_the_agents_are_there() -> None:
    names = sorted(_name(path) for path in MODULE_FILES)
    assert names == sorted(CATS_MODULES + OWN_MODULES)


def _assert_silent(command: list[str]) -> None:
    """The checker exits 0 and prints nothing at all: a warning is a finding too."""
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout + result.stderr == ""


def _lint(module_file: Path) -> list[str]:
    """The IETF rules for the CATS proposals; RFC 8407's generic ones, with the product's
    own name and namespace prefixes, for the product's modules."""
    if _name(module_file) in OWN_MODULES:
        return [
            "--lint",
            "--lint-modulename-prefix=cats",
            "--lint-namespace-prefix=urn:cats-controller:yang:",
        ]
    return ["--ietf", "--lint"]


@pytest.mark.parametrize("module_file", MODULE_FILES, ids=lambda path: path.name)
def test_pyang_lint_is_silent(module_file: Path) -> None:
    lint = [*_lint(module_file), "--max-line-length=72", "-p", str(YANG_DIR)]
    _assert_silent([*pyang_command(), *lint, str(module_file)])


@pytest.mark.parametrize("module_file", MODULE_FILES, ids=lambda path: path.name)
def test_yanglint_is_silent(module_file: Path) -> None:
    _assert_silent(["yanglint", "-p", str(YANG_DIR), str(module_file)])


@pytest.mark.parametrize("module_file", MODULE_FILES, ids=lambda path: path.name)
def test_file_name_matches_module_and_revision(module_file: Path) -> None:
    text = module_file.read_text(encoding="utf-8")
    name, revision = module_file.stem.split("@")
    assert re.search(rf"^module {re.escape(name)} {{", text, re.MULTILINE)
    first_revision = re.search(r"^  revision (\S+) {", text, re.MULTILINE)
    assert first_revision is not None
    assert first_revision.group(1) == revision
    base = "urn:cats-controller:yang:" if name in OWN_MODULES else "urn:ietf:params:xml:ns:yang:"
    assert f'namespace "{base}{name}";' in text
