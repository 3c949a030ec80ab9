"""The error of the evaluation layer: a trace, topology or policy file that cannot be used."""

from __future__ import annotations

from controller.errors import CatsError, ErrorItem, ErrorType


class EvaluateError(CatsError):
    """An input of ``catsctl evaluate`` that is refused, naming the file and what is wrong."""


def invalid(message: str, path: str | None = None) -> EvaluateError:
    """An ``invalid-value`` error about ``path`` (a file, line or dotted key)."""
    return EvaluateError(ErrorItem(ErrorType.APPLICATION, "invalid-value", message, path))
