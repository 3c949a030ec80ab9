"""The audit API: any component records an event with :func:`record`.

One audit store is installed per process (:func:`install`, by the server at start); without one
:func:`record` does nothing, so a component never needs to know whether it runs in a server.
The request context (:mod:`.context`) supplies transport, source address and session unless the
caller names them. Every text is redacted (:mod:`.redact`) before it is kept; a store that
fails (a full disk) is logged once and never fails the operation that was audited.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import UTC, datetime
from enum import StrEnum

from controller.audit.context import current
from controller.audit.redact import redact
from controller.audit.storage import AuditRecord, AuditStore
from controller.observability.metrics import AUDIT_RECORDS
from controller.observability.metrics import NETCONF_LOGINS_FAILED as LOGINS_FAILED

LOG = logging.getLogger("catsctl.audit")


class Event(StrEnum):
    """What an audit record is about (cats-controller-admin ``audit/record/event``)."""

    COMMIT = "commit"
    ROLLBACK = "rollback"
    CONFIRMED_COMMIT = "confirmed-commit"
    LOGIN_FAILED = "login-failed"
    ACCESS_DENIED = "access-denied"
    SESSION_START = "session-start"
    SESSION_END = "session-end"
    KILL_SESSION = "kill-session"
    LOCK = "lock"
    UNLOCK = "unlock"
    LOCK_BROKEN = "lock-broken"
    SERVER_START = "server-start"
    SERVER_STOP = "server-stop"


class _Installed:
    """The process's audit store and whether its failure was logged already."""

    def __init__(self) -> None:
        self.store: AuditStore | None = None
        self.failed = False
        self.lock = threading.Lock()


_INSTALLED = _Installed()


def install(store: AuditStore | None) -> None:
    """Make ``store`` the process's audit store (None: stop auditing)."""
    with _INSTALLED.lock:
        _INSTALLED.store = store
        _INSTALLED.failed = False


def installed() -> AuditStore | None:
    """The process's audit store, if any."""
    return _INSTALLED.store


def now_text() -> str:
    """The current time as cats-controller-admin writes it (RFC 3339, UTC, microseconds)."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def record(  # noqa: PLR0913 - an event's fields, all optional but the first two
    event: Event,
    user: str,
    *,
    detail: str = "",
    commit_id: int | None = None,
    session: str | None = None,
    transport: str | None = None,
    source: str | None = None,
    time: str | None = None,
    node: str | None = None,
) -> int:
    """Keep one audit record; its id (0 when no store is installed or the store failed).
    ``time`` (default: now) and ``node`` are a cluster's commit's, the same on every replica."""
    store = _INSTALLED.store
    if store is None:
        return 0
    info = current()
    kept = AuditRecord(
        time or now_text(),
        event.value,
        redact(user),
        transport or info.transport,
        source if source is not None else info.source,
        session if session is not None else info.session,
        commit_id,
        redact(detail),
        node=node,
    )
    AUDIT_RECORDS.labels(event.value).inc()
    try:
        return store.append(kept)
    except (sqlite3.Error, OSError) as exc:
        with _INSTALLED.lock:
            first, _INSTALLED.failed = not _INSTALLED.failed, True
        if first:
            LOG.error("audit: cannot keep records: %s (the operations go on unaudited)", exc)
        return 0


def has_commit(commit_id: int, time: str) -> bool:
    """Whether the audit log holds the commit ``commit_id`` made at ``time`` already (False
    without a store, or when the store fails: a record twice rather than none)."""
    store = _INSTALLED.store
    if store is None:
        return False
    try:
        return store.has_commit(commit_id, time)
    except (sqlite3.Error, OSError):
        return False


def login_failed(user: str, transport: str, source: str) -> None:
    """A password that did not authenticate ``user`` (RESTCONF basic authentication, NETCONF
    SSH password authentication): one ``login-failed`` record."""
    LOGINS_FAILED.labels(transport).inc()
    record(
        Event.LOGIN_FAILED,
        user,
        transport=transport,
        source=source,
        detail="authentication failed: unknown user or wrong password",
    )
