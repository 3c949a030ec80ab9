"""``catsctl demo``: the end-to-end main job on loopback (DESIGN.md, issue 8).

The package is imported by every ``catsctl`` command for its parser, so it re-exports only
that; the demo itself (``controller.demo.run``) is imported when the command runs.
"""

from controller.demo.cli import add_parsers

__all__ = ["add_parsers"]
