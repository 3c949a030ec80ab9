"""Audit and commit-history records: the request context, the audit API and their storage."""

from controller.audit.context import RequestInfo, annotated, bind, current, request
from controller.audit.events import Event, install, installed, login_failed, record
from controller.audit.storage import (
    AuditRecord,
    AuditStore,
    CommitEntry,
    HistoryStore,
    SqliteAudit,
    SqliteHistory,
)

__all__ = [
    "AuditRecord",
    "AuditStore",
    "CommitEntry",
    "Event",
    "HistoryStore",
    "RequestInfo",
    "SqliteAudit",
    "SqliteHistory",
    "annotated",
    "bind",
    "current",
    "install",
    "installed",
    "login_failed",
    "record",
    "request",
]
