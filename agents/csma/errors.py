"""Errors of the C-SMA layer.

One subclass of the project's root error, :class:`controller.errors.CatsError`, per layer
(docs/architecture.md).
"""

from __future__ import annotations

from controller.errors import CatsError, ErrorItem, ErrorType


class CsmaError(CatsError):
    """The C-SMA refused an RPC; the items become the rpc-error (or RESTCONF errors)."""


def refused(
    tag: str, message: str, *, app_tag: str | None = None, path: str | None = None
) -> CsmaError:
    """A one-item :class:`CsmaError` of error-type application."""
    return CsmaError(ErrorItem(ErrorType.APPLICATION, tag, message, path, app_tag))
