"""How every agent process logs: to stderr, one line per event (docs/architecture.md).

``catsctl`` sub-commands that run an agent call :func:`configure_logging` once at start;
``--verbose`` turns DEBUG on.
"""

from __future__ import annotations

import logging
import sys

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(*, verbose: bool) -> None:
    """Log to stderr at INFO, or DEBUG when ``verbose``."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, stream=sys.stderr, format=FORMAT
    )
