"""``catsctl demo``: the whole system end to end on loopback (docs/architecture.md).

The package is imported by every ``catsctl`` command for its parser, so it re-exports only
that; the demo itself (``controller.demo.run``) is imported when the command runs.
"""

from controller.demo.cli import add_parsers

__all__ = ["add_parsers"]
