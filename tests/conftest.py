"""Fixtures shared by every test: the compiled CATS schema and the project's folders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.model import Schema

ROOT = Path(__file__).resolve().parents[1]
YANG_DIR = ROOT / "yang"
EXAMPLES_DIR = YANG_DIR / "examples"
DOCS_DIR = ROOT / "docs"


BEDS = frozenset(
    {
        "tests/functional/test_closed_loop.py",
        "tests/functional/test_console_browser.py",
        "tests/functional/test_demo.py",
        "tests/functional/test_operator_demo.py",
    }
)
"""Test files that start the demonstration's whole bed (a dozen processes on the section 7.1
loopback twins): with pytest-xdist they run one after another on one worker."""


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With pytest-xdist (``-n``): a file's tests run on one worker, as in a serial run (its
    module-scoped servers start once), and the files of :data:`BEDS` all on the same one.
    (``--dist loadgroup`` would do this with marks, but pytest 9's node ids ignore the group
    pytest-xdist 3.8 appends to them.)"""
    from xdist.scheduler import LoadFileScheduling  # noqa: PLC0415 - only with pytest-xdist

    class Scheduling(LoadFileScheduling):  # type: ignore[misc]  # pytest-xdist is untyped
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "beds" if path in BEDS else path

    return Scheduling(config, log)


@pytest.fixture(scope="session")
def schema() -> Iterator[Schema]:
    """The five CATS modules compiled once for the whole session."""
    with Schema() as compiled:
        yield compiled
