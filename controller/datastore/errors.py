"""Errors of the datastore layer, with RFC 6241 Appendix A error-tags."""

from __future__ import annotations

from controller.errors import CatsError, ErrorItem, ErrorType


class DatastoreError(CatsError):
    """A request to the server core was refused; ``items`` say where and why."""


def refuse(  # noqa: PLR0913 - the fields of one ErrorItem
    tag: str,
    message: str,
    path: str | None = None,
    *,
    info: tuple[tuple[str, str], ...] = (),
    error_type: ErrorType = ErrorType.APPLICATION,
    app_tag: str | None = None,
) -> DatastoreError:
    """One-item :class:`DatastoreError` (the caller raises it)."""
    return DatastoreError(ErrorItem(error_type, tag, message, path, app_tag, info))


def operation_failed(message: str, path: str | None = None) -> DatastoreError:
    """``operation-failed``: the catch-all of RFC 6241 Appendix A."""
    return refuse("operation-failed", message, path)
