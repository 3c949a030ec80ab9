"""A schema with the RESTCONF test module, and a resolver over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.model import Schema, project_yang_dir
from controller.model.paths import PathResolver

TEST_YANG = Path(__file__).resolve().parents[2] / "yang"


@pytest.fixture(scope="session")
def rc_schema() -> Iterator[Schema]:
    """rc-test and bench-list, compiled once."""
    with Schema([project_yang_dir(), TEST_YANG], modules=("rc-test", "bench-list")) as schema:
        yield schema


@pytest.fixture(scope="session")
def resolver(rc_schema: Schema) -> PathResolver:
    """A path resolver over rc-test and bench-list."""
    return PathResolver(rc_schema.context)
