"""How every process logs: one line per event on stderr, as text or JSON, with levels per
component.

``--log-format json`` writes ``{"time", "level", "component", "message"}`` objects;
``--log-level COMPONENT=LEVEL`` (repeatable; a bare LEVEL sets the default) sets a logger's
level. The protocol libraries' own loggers (ncclient dumps every message it sends, paramiko
every transport event) stay at WARNING unless ``--verbose`` or a ``--log-level`` names them.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: Loggers that print protocol dumps at INFO.
CHATTY = ("ncclient", "paramiko")
FORMATS = ("text", "json")


class JsonFormatter(logging.Formatter):
    """One JSON object per record (the exception, if any, as one more member)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as JSON."""
        document: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "component": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document)


def parse_levels(levels: Sequence[str]) -> tuple[int | None, dict[str, int]]:
    """The default level and the per-component ones of ``--log-level`` values.

    Raises:
        ValueError: a level that is not DEBUG, INFO, WARNING, ERROR or CRITICAL.
    """
    default: int | None = None
    named: dict[str, int] = {}
    for value in levels:
        component, _, level = value.rpartition("=")
        number = logging.getLevelName(level.upper())
        if not isinstance(number, int):
            raise ValueError(f"--log-level {value}: {level!r} is not a level")
        if component:
            named[component] = number
        else:
            default = number
    return default, named


def configure(*, verbose: bool, log_format: str = "text", levels: Sequence[str] = ()) -> None:
    """Configure the root logger once for the process."""
    default, named = parse_levels(levels)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(default if default is not None else (logging.DEBUG if verbose else logging.INFO))
    for name in CHATTY:
        if not verbose:
            logging.getLogger(name).setLevel(logging.WARNING)
    for name, level in named.items():
        logging.getLogger(name).setLevel(level)
