"""Every module is clean under the IETF linter and yanglint, and named MODULE@REVISION."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from controller.model import CATS_MODULES
from controller.model.schema import PRODUCT_MODULES
from tests.conftest import YANG_DIR
from tools.yang_tree import pyang_command

MODULE_FILES = sorted(YANG_DIR.glob("*@*.yang"))


def test_the_five_cats_modules_and_the_admin_module_are_there() -> None:
    names = sorted(path.name.split("@")[0] for path in MODULE_FILES)
    assert names == sorted(CATS_MODULES + PRODUCT_MODULES)


def _is_ietf(module_file: Path) -> bool:
    """An IETF proposal (``ietf-*``); the product's own modules have the contract's namespace
    (``urn:cats-controller:yang:``), which pyang's ``--ietf`` names a finding by design."""
    return module_file.name.startswith("ietf-")


def _assert_silent(command: list[str]) -> None:
    """The checker exits 0 and prints nothing at all: a warning is a finding too."""
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout + result.stderr == ""


@pytest.mark.parametrize("module_file", MODULE_FILES, ids=lambda path: path.name)
def test_pyang_ietf_lint_is_silent(module_file: Path) -> None:
    ietf = ["--ietf"] if _is_ietf(module_file) else []
    lint = [*ietf, "--lint", "--max-line-length=72", "-p", str(YANG_DIR)]
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
    prefix = "urn:ietf:params:xml:ns:yang" if _is_ietf(module_file) else "urn:cats-controller:yang"
    assert f'namespace "{prefix}:{name}";' in text
