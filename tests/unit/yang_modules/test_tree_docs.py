"""The pyang tree documents in docs/ are those of the modules as they are now."""

from __future__ import annotations

from tools import yang_tree


def test_every_module_has_a_tree_document() -> None:
    for module_file in yang_tree.module_files():
        assert yang_tree.tree_path(module_file).exists(), module_file.name


def test_tree_documents_are_current() -> None:
    for module_file in yang_tree.module_files():
        written = yang_tree.tree_path(module_file).read_text(encoding="utf-8")
        assert written == yang_tree.render_tree(module_file), (
            f"{module_file.name}: run python -m tools.yang_tree"
        )
