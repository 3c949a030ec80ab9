"""Regenerate (or, with ``--check``, verify) the ``pyang -f tree`` output of each CATS module.

Usage: ``python -m tools.yang_tree [--check]``. The trees live in ``docs/MODULE.tree``; a test
runs the check so that the documents never drift from the modules.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
YANG_DIR = ROOT / "yang"
DOCS_DIR = ROOT / "docs"


def pyang_command() -> list[str]:
    """The pyang of this interpreter's environment, else the one on PATH."""
    beside = Path(sys.executable).parent / "pyang"
    found = str(beside) if beside.exists() else shutil.which("pyang")
    if found is None:
        raise SystemExit("pyang is not installed (pip install pyang)")
    return [found]


def module_files() -> list[Path]:
    """Every ``MODULE@REVISION.yang`` of the project."""
    return sorted(YANG_DIR.glob("*@*.yang"))


def tree_path(module_file: Path) -> Path:
    """``docs/MODULE.tree`` for ``yang/MODULE@REVISION.yang``."""
    return DOCS_DIR / f"{module_file.name.split('@')[0]}.tree"


def render_tree(module_file: Path) -> str:
    """``pyang -f tree`` of one module (with its groupings when it has no data nodes)."""
    options = ["-f", "tree", "-p", str(YANG_DIR)]
    if module_file.name.startswith("ietf-cats-types@"):
        options.append("--tree-print-groupings")
    result = subprocess.run(
        [*pyang_command(), *options, str(module_file)],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def main(argv: list[str] | None = None) -> int:
    """Write the trees, or with ``--check`` report the stale ones and exit 1."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="verify instead of writing")
    args = parser.parse_args(argv)
    stale = []
    for module_file in module_files():
        target = tree_path(module_file)
        tree = render_tree(module_file)
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == tree:
            continue
        if args.check:
            stale.append(target.relative_to(ROOT))
        else:
            target.write_text(tree, encoding="utf-8")
            print(f"wrote {target.relative_to(ROOT)}")
    for path in stale:
        print(f"stale: {path} (run python -m tools.yang_tree)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
