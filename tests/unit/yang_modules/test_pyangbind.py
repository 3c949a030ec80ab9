"""pyangbind compiles every module, alone and all five together, and the SDK's committed
bindings are exactly those compilations (docs/notes/pyangbind.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import DOCS_DIR, YANG_DIR
from tools import sdk_generate
from tools.yang_tree import pyang_command

MODULE_FILES = sorted(YANG_DIR.glob("*@*.yang"))


@pytest.mark.parametrize("module_file", MODULE_FILES, ids=lambda path: path.name)
def test_each_module_compiles_alone_into_the_committed_binding(module_file: Path) -> None:
    """``render`` fails on any pyangbind message; the result is what controller/sdk holds."""
    committed = sdk_generate.binding_path(module_file).read_text(encoding="utf-8")
    assert committed == sdk_generate.render(module_file), (
        f"{module_file.name}: run python -m tools.sdk_generate"
    )


def test_the_bindings_package_is_current() -> None:
    init = sdk_generate.BINDINGS_DIR / "__init__.py"
    assert init.read_text(encoding="utf-8") == sdk_generate.INIT_TEXT
    generated = {path.name for path in sdk_generate.BINDINGS_DIR.glob("*.py")}
    expected = {sdk_generate.binding_path(path).name for path in MODULE_FILES}
    assert generated == expected | {"__init__.py"}


def test_all_five_modules_compile_together(tmp_path: Path) -> None:
    output = tmp_path / "all.py"
    result = sdk_generate.run_pybind(MODULE_FILES, output)
    assert (result.returncode, result.stderr) == (0, "")
    text = output.read_text(encoding="utf-8")
    for module_file in MODULE_FILES:
        root_class = sdk_generate.module_name(module_file).replace("-", "_")
        assert re.search(rf"^class {root_class}\(PybindBase\):", text, re.MULTILINE), root_class


def test_no_module_names_a_typedef_like_one_of_its_identities() -> None:
    """The convention that keeps pyangbind working (docs/yang-conventions.md)."""
    for module_file in MODULE_FILES:
        text = module_file.read_text(encoding="utf-8")
        identities = set(re.findall(r"^\s*identity ([\w.-]+)", text, re.MULTILINE))
        typedefs = set(re.findall(r"^\s*typedef ([\w.-]+)", text, re.MULTILINE))
        assert identities & typedefs == set(), module_file.name


def _reproducer() -> str:
    note = (DOCS_DIR / "notes" / "pyangbind.md").read_text(encoding="utf-8")
    found = re.search(r"```yang\n(.*?)```", note, re.DOTALL)
    assert found is not None, "docs/notes/pyangbind.md lost its reproducer"
    return found.group(1)


def test_the_recorded_pyangbind_defect_still_holds(tmp_path: Path) -> None:
    """The reproducer of docs/notes/pyangbind.md is valid YANG that pyangbind refuses.

    When a pyangbind release compiles it, this fails: retire the note and the convention.
    """
    module = tmp_path / "repro.yang"
    module.write_text(_reproducer(), encoding="utf-8")
    pyang = subprocess.run(
        [*pyang_command(), "-p", str(tmp_path), str(module)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (pyang.returncode, pyang.stderr) == (0, "")
    yanglint = subprocess.run(
        ["yanglint", "-p", str(tmp_path), str(module)], capture_output=True, text=True, check=False
    )
    assert (yanglint.returncode, yanglint.stderr) == (0, "")
    pybind = sdk_generate.run_pybind([module], tmp_path / "repro.py")
    assert pybind.returncode != 0
    assert "Duplicate definition of r:price" in pybind.stderr
