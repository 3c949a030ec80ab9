"""Logging of every process: JSON lines, per-component levels, no protocol dumps by default."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from controller.observability.logs import JsonFormatter, configure, parse_levels


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name in ("ncclient", "paramiko", "catsctl.serve"):
        logging.getLogger(name).setLevel(logging.NOTSET)


def test_json_lines_carry_time_level_component_and_message() -> None:
    record = logging.LogRecord(
        "catsctl.serve", logging.INFO, __file__, 1, "serving %s", ("x",), None
    )
    document = json.loads(JsonFormatter().format(record))
    assert document["level"] == "INFO"
    assert document["component"] == "catsctl.serve"
    assert document["message"] == "serving x"
    assert document["time"].endswith("+00:00")


def test_levels_per_component_and_quiet_protocol_libraries() -> None:
    configure(verbose=False, levels=["WARNING", "catsctl.serve=DEBUG"])
    assert logging.getLogger().level == logging.WARNING
    assert logging.getLogger("catsctl.serve").level == logging.DEBUG
    assert logging.getLogger("ncclient").level == logging.WARNING
    configure(verbose=False, levels=["ncclient=INFO"])
    assert logging.getLogger("ncclient").level == logging.INFO


def test_a_level_that_is_none_is_refused() -> None:
    with pytest.raises(ValueError, match="LOUD"):
        parse_levels(["catsctl=LOUD"])
