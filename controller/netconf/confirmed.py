"""Confirmed commit (RFC 6241 8.4, :confirmed-commit:1.1) over the core's commit and edit.

Before a confirmed commit, running's configuration is saved; unless a confirming commit comes
within the timeout, running is put back through ``core.restore`` (and on ``cancel-commit``, or
when the session that issued it ends and it was not ``persist``-ed). Each step is announced as
RFC 6470 ``netconf-confirmed-commit`` through ``events``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from controller.audit import annotated
from controller.datastore.api import (
    SYSTEM,
    Content,
    DatastoreName,
    Principal,
    ReadRequest,
    ServerCore,
)
from controller.errors import CatsError, ErrorType
from controller.model import Encoding
from controller.netconf.errors import netconf_error

LOG = logging.getLogger(__name__)
DEFAULT_TIMEOUT = 600
CONFIRMED_COMMIT = "ietf-netconf-notifications:netconf-confirmed-commit"
#: The history comment of each way a confirmed commit is rolled back.
_ROLLED_BACK = {
    "timeout": "confirmed commit not confirmed in time: rolled back",
    "cancel": "confirmed commit cancelled: rolled back",
}


@dataclass(frozen=True, slots=True)
class CommitParams:
    """The parameters of ``<commit>`` (RFC 6241 8.4.5.1)."""

    confirmed: bool = False
    timeout: int = DEFAULT_TIMEOUT
    persist: str | None = None
    persist_id: str | None = None


@dataclass(frozen=True, slots=True)
class Actor:
    """Who issued a commit: the session and its user (for the RFC 6470 events)."""

    session_id: int
    user: str


@dataclass
class _Pending:
    backup: str
    owner: Actor
    persist: str | None
    timer: threading.Timer | None = field(default=None, repr=False)


#: Publishes one notification document (RFC 7951 JSON) on the NETCONF stream.
Events = Callable[[str], None]


class ConfirmedCommits:
    """The one confirmed commit a server may have in progress."""

    def __init__(self, core: ServerCore, events: Events) -> None:
        self._core = core
        self._events = events
        self._lock = threading.RLock()
        self._pending: _Pending | None = None

    @property
    def pending(self) -> bool:
        """Whether a confirmed commit waits for its confirmation."""
        return self._pending is not None

    def commit(self, actor: Actor, principal: Principal, params: CommitParams) -> None:
        """A plain, confirmed, confirming or extending commit."""
        with self._lock:
            pending = self._pending
            if pending is None:
                if params.persist_id is not None:
                    raise _invalid("no confirmed commit with that persist-id is in progress")
                backup = self._save() if params.confirmed else ""
                self._core.commit(principal, session=str(actor.session_id))
                if params.confirmed:
                    self._start(_Pending(backup, actor, params.persist), params, "start")
                return
            self._check_owner(pending, actor, params.persist_id)
            self._core.commit(principal, session=str(actor.session_id))
            self._stop_timer(pending)
            if params.confirmed:
                pending.persist = params.persist if params.persist is not None else pending.persist
                pending.owner = actor
                self._start(pending, params, "extend")
            else:
                self._pending = None
                self._announce("complete", actor)

    def cancel(self, actor: Actor, persist_id: str | None) -> None:
        """``cancel-commit`` (RFC 6241 8.4.4.1): put running back now."""
        with self._lock:
            pending = self._pending
            if pending is None:
                raise netconf_error(
                    "operation-failed",
                    "no confirmed commit is in progress",
                    error_type=ErrorType.APPLICATION,
                )
            self._check_owner(pending, actor, persist_id)
            if not self._rollback(pending, "cancel", actor):
                raise netconf_error(
                    "rollback-failed",
                    "running could not be put back; the confirmed commit's changes stay",
                    error_type=ErrorType.APPLICATION,
                )

    def session_ended(self, actor: Actor) -> None:
        """A session ended: its confirmed commit without persist is cancelled (8.4.1)."""
        with self._lock:
            pending = self._pending
            if pending and pending.persist is None and pending.owner.session_id == actor.session_id:
                self._rollback(pending, "cancel", actor)

    def close(self) -> None:
        """Stop the timer (the server is stopping; the commit stays unconfirmed)."""
        with self._lock:
            if self._pending is not None:
                self._stop_timer(self._pending)

    # ---------------------------------------------------------------- internals

    def _check_owner(self, pending: _Pending, actor: Actor, persist_id: str | None) -> None:
        if pending.persist is not None:
            if persist_id != pending.persist:
                raise _invalid("the persist-id does not match the confirmed commit's persist")
        elif persist_id is not None:
            raise _invalid("the confirmed commit in progress was not given persist")
        elif pending.owner.session_id != actor.session_id:
            raise netconf_error(
                "operation-failed",
                "another session's confirmed commit is in progress",
                error_type=ErrorType.APPLICATION,
            )

    def _save(self) -> str:
        request = ReadRequest(DatastoreName.RUNNING, None, Encoding.JSON, content=Content.CONFIG)
        return self._core.read(request, SYSTEM).document or "{}"

    def _start(self, pending: _Pending, params: CommitParams, event: str) -> None:
        timer = threading.Timer(params.timeout, self._expire, args=(pending,))
        timer.daemon = True
        pending.timer = timer
        self._pending = pending
        timer.start()
        self._announce(event, pending.owner, params.timeout)

    @staticmethod
    def _stop_timer(pending: _Pending) -> None:
        if pending.timer is not None:
            pending.timer.cancel()

    def _expire(self, pending: _Pending) -> None:
        with self._lock:
            if self._pending is pending:
                self._rollback(pending, "timeout", None)

    def _rollback(self, pending: _Pending, event: str, actor: Actor | None) -> bool:
        """Put running back as the server's own action, past any session's lock (8.4: the
        rollback is not an edit of the session that holds running); False (logged, not
        announced) when the core refused it."""
        self._stop_timer(pending)
        self._pending = None
        try:
            with annotated(operation=f"confirmed-commit-{event}", comment=_ROLLED_BACK[event]):
                self._core.restore(DatastoreName.RUNNING, pending.backup, Encoding.JSON)
        except CatsError:
            LOG.exception("the rollback of a confirmed commit failed")
            return False
        self._announce(event, actor or pending.owner)
        return True

    def _announce(self, event: str, actor: Actor, timeout: int | None = None) -> None:
        body: dict[str, object] = {
            "username": actor.user,
            "session-id": actor.session_id,
            "confirm-event": event,
        }
        if timeout is not None:
            body["timeout"] = timeout
        if event == "timeout":
            body = {"confirm-event": event}
        try:
            self._events(json.dumps({CONFIRMED_COMMIT: body}))
        except CatsError:
            LOG.exception("cannot publish netconf-confirmed-commit")


def _invalid(message: str) -> CatsError:
    return netconf_error("invalid-value", message, error_type=ErrorType.APPLICATION)
