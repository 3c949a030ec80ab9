"""Fixtures shared by every test: the compiled CATS schema and the project's folders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.model import Schema

ROOT = Path(__file__).resolve().parents[1]
YANG_DIR = ROOT / "yang"
EXAMPLES_DIR = YANG_DIR / "examples"
DOCS_DIR = ROOT / "docs"


@pytest.fixture(scope="session")
def schema() -> Iterator[Schema]:
    """The five CATS modules compiled once for the whole session."""
    with Schema() as compiled:
        yield compiled
