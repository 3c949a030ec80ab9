"""The CATS Service Contact Instance (draft-zhangb-cats-sci-implementation): ``catsctl sci``."""

from agents.sci.cli import add_parsers

__all__ = ["add_parsers"]
