"""Who is asking, over what and why: the request context the server core records with a change.

A northbound binds a :class:`RequestInfo` for the duration of a request (RESTCONF) or of a
session's thread (NETCONF); the commit history and the audit log read it, so that every commit
and event carries its transport, source address, session, and the committer's comment and
label, without threading them through every call. A context variable is per thread (and per
task), so concurrent requests never see each other's.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """The context of one request or session (``transport`` as cats-controller-admin names
    it: ``netconf``, ``restconf`` or ``server``)."""

    transport: str = "server"
    source: str = ""
    session: str | None = None
    operation: str | None = None  # the protocol operation: edit-config, commit, rollback, ...
    comment: str | None = None
    label: str | None = None


SERVER = RequestInfo()
_CURRENT: ContextVar[RequestInfo] = ContextVar("cats_request", default=SERVER)


def current() -> RequestInfo:
    """The context of the request being served (:data:`SERVER` when none is bound)."""
    return _CURRENT.get()


def bind(info: RequestInfo) -> None:
    """Bind ``info`` for the rest of the calling thread (a NETCONF session's thread)."""
    _CURRENT.set(info)


@contextlib.contextmanager
def request(info: RequestInfo) -> Iterator[RequestInfo]:
    """Bind ``info`` for the block (one RESTCONF request)."""
    token = _CURRENT.set(info)
    try:
        yield info
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def annotated(**changes: str | None) -> Iterator[RequestInfo]:
    """The current context with some fields set (``operation``, ``comment``, ``label``) for the
    block; None leaves a field as it is."""
    values = {name: value for name, value in changes.items() if value is not None}
    with request(replace(current(), **values)) as info:
        yield info


#: What a commit label may be (cats-controller-admin ``label``).
LABEL = re.compile(r"[A-Za-z0-9._-]{1,64}")
#: The longest commit comment (cats-controller-admin ``comment``).
COMMENT_MAX = 1024


def comment_problem(comment: str | None, label: str | None) -> str | None:
    """Why a comment or label given with a request cannot be kept, or None."""
    if comment is not None and len(comment) > COMMENT_MAX:
        return f"the commit comment is longer than {COMMENT_MAX} characters"
    if label is not None and not LABEL.fullmatch(label):
        return "the commit label must be 1-64 of A-Z a-z 0-9 . _ -"
    return None
