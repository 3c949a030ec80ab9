"""Errors of the SCI agent layer.

One subclass of the project's root error, :class:`controller.errors.CatsError`, per layer
(docs/architecture.md).
"""

from __future__ import annotations

from controller.errors import CatsError, ErrorItem, ErrorType


class SciError(CatsError):
    """The SCI refused an input (configuration, pushed metrics) or could not do its job."""


def refused(message: str, *, path: str | None = None, tag: str = "invalid-value") -> SciError:
    """A :class:`SciError` with one application error item."""
    return SciError(ErrorItem(ErrorType.APPLICATION, tag, message, path=path))
