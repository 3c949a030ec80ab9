"""Errors of the NETCONF layer (RFC 6241 4.3, Appendix A) and the framing's own failures."""

from __future__ import annotations

from controller.errors import CatsError, ErrorItem, ErrorType


class NetconfError(CatsError):
    """A request was refused by the NETCONF layer; ``items`` become ``rpc-error`` elements."""


class FramingError(CatsError):
    """The byte stream broke RFC 6242 framing (or a size bound): the session must end."""


def netconf_error(
    tag: str,
    message: str,
    *,
    error_type: ErrorType = ErrorType.PROTOCOL,
    path: str | None = None,
    info: tuple[tuple[str, str], ...] = (),
) -> NetconfError:
    """One-item :class:`NetconfError` (the caller raises it)."""
    return NetconfError(ErrorItem(error_type, tag, message, path, None, info))


def bad_element(tag: str, element: str, message: str) -> NetconfError:
    """An error naming the offending element in ``error-info/bad-element``."""
    return netconf_error(tag, message, info=(("bad-element", element),))
