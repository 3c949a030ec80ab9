"""Shared values of the C-NMA unit tests: the section 7.1 example configuration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.cnma.config import CnmaConfig, load_config
from controller.model import Schema

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "cnma-7.1.toml"


@pytest.fixture(scope="session")
def example() -> CnmaConfig:
    """The example configuration of docs/examples (service-metrics-op 7.1)."""
    return load_config(EXAMPLE)


@pytest.fixture(scope="session")
def schema() -> Iterator[Schema]:
    """The CATS modules, for validating built RPC input."""
    with Schema() as loaded:
        yield loaded
