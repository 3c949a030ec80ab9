"""Confirmed commit (RFC 6241 8.4, :confirmed-commit:1.1) over the core's commit and edit.

Before a confirmed commit, running's configuration is saved; unless a confirming commit comes
within the timeout, running is put back through ``core.restore`` (and on ``cancel-commit``, or
when the session that issued it ends and it was not ``persist``-ed). Each step is announced as
RFC 6470 ``netconf-confirmed-commit`` through ``events``.

The backup, its owner, persist-id and deadline are kept durably by the core
(``core.keep``) before the confirmed commit reaches running, and forgotten only once it is
confirmed or rolled back: so a restart, however abrupt, finds the commit still pending, as
netopeer2 does. :meth:`ConfirmedCommits.resume` then rolls it back at once when its deadline
has passed or when it was not given ``persist`` (its session is gone, 8.4.1), and otherwise
keeps it pending for the time it has left, to be confirmed or cancelled by its persist-id from
a new session.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

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
KEPT = "confirmed-commit"  # the name the core keeps the pending commit under


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
    deadline: float = 0.0  # wall-clock seconds (time.time), so that it outlives a restart
    timer: threading.Timer | None = field(default=None, repr=False)

    def document(self) -> str:
        """What the core keeps of it."""
        return json.dumps(
            {
                "backup": self.backup,
                "session-id": self.owner.session_id,
                "user": self.owner.user,
                "persist": self.persist,
                "deadline": datetime.fromtimestamp(self.deadline, UTC).isoformat(),
            }
        )

    @classmethod
    def from_document(cls, document: str) -> _Pending:
        """The inverse of :meth:`document`."""
        kept = json.loads(document)
        owner = Actor(int(kept["session-id"]), str(kept["user"]))
        deadline = datetime.fromisoformat(str(kept["deadline"])).timestamp()
        persist = kept.get("persist")
        return cls(str(kept["backup"]), owner, None if persist is None else str(persist), deadline)


#: Publishes one notification document (RFC 7951 JSON) on the NETCONF stream.
Events = Callable[[str], None]


class ConfirmedCommits:
    """The one confirmed commit a server may have in progress."""

    def __init__(self, core: ServerCore, events: Events) -> None:
        self._core = core
        self._events = events
        self._lock = threading.RLock()
        self._pending: _Pending | None = None
        self._closed = False

    @property
    def pending(self) -> bool:
        """Whether a confirmed commit waits for its confirmation (read under the lock, so a
        rollback in progress is seen finished, running and the kept backup restored)."""
        with self._lock:
            return self._pending is not None

    def resume(self) -> None:
        """Take up the confirmed commit pending before a restart (or a crash), if any."""
        with self._lock:
            document = self._core.kept(KEPT)
            if document is None:
                return
            pending = _Pending.from_document(document)
            left = pending.deadline - time.time()
            if pending.persist is None or left <= 0:
                why = "its session ended" if pending.persist is None else "its timeout passed"
                LOG.warning(
                    "the confirmed commit of session %d (%s) was not confirmed before the "
                    "restart and %s: running is put back as it was before it",
                    pending.owner.session_id,
                    pending.owner.user,
                    why,
                )
                self._rollback(pending, "cancel" if pending.persist is None else "timeout", None)
                return
            LOG.warning(
                "a confirmed commit with persist-id is still pending from before the restart: "
                "%.0f s left to confirm or cancel it",
                left,
            )
            self._arm(pending, left)

    def commit(self, actor: Actor, principal: Principal, params: CommitParams) -> None:
        """A plain, confirmed, confirming or extending commit."""
        with self._lock:
            pending = self._pending
            if pending is None:
                if params.persist_id is not None:
                    raise _invalid("no confirmed commit with that persist-id is in progress")
                if not params.confirmed:
                    self._core.commit(principal, session=str(actor.session_id))
                    return
                started = _Pending(self._save(), actor, params.persist, _deadline(params))
                self._core.keep(KEPT, started.document())  # durable before running changes
                try:
                    self._core.commit(principal, session=str(actor.session_id))
                except BaseException:
                    self._core.keep(KEPT, None)
                    raise
                self._start(started, params, "start")
                return
            self._check_owner(pending, actor, params.persist_id)
            if params.confirmed:
                self._extend(pending, actor, principal, params)
                return
            self._core.commit(principal, session=str(actor.session_id))
            self._stop_timer(pending)
            self._pending = None
            self._core.keep(KEPT, None)
            self._announce("complete", actor)

    def _extend(
        self, pending: _Pending, actor: Actor, principal: Principal, params: CommitParams
    ) -> None:
        """A confirmed commit on a pending one: commit again with a new timeout (8.4.5.1)."""
        persist = params.persist if params.persist is not None else pending.persist
        extended = _Pending(pending.backup, actor, persist, _deadline(params))
        self._core.keep(KEPT, extended.document())
        try:
            self._core.commit(principal, session=str(actor.session_id))
        except BaseException:
            self._core.keep(KEPT, pending.document())  # still pending as it was
            raise
        self._stop_timer(pending)
        self._start(extended, params, "extend")

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
            if self._closed:  # the server stops: the next start rolls it back (resume)
                return
            if pending and pending.persist is None and pending.owner.session_id == actor.session_id:
                self._rollback(pending, "cancel", actor)

    def close(self) -> None:
        """Stop the timer (the server is stopping; the commit stays pending on disk, for
        :meth:`resume` at the next start)."""
        with self._lock:
            self._closed = True
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
        self._arm(pending, params.timeout)
        self._announce(event, pending.owner, params.timeout)

    def _arm(self, pending: _Pending, seconds: float) -> None:
        timer = threading.Timer(seconds, self._expire, args=(pending,))
        timer.daemon = True
        pending.timer = timer
        self._pending = pending
        timer.start()

    @staticmethod
    def _stop_timer(pending: _Pending) -> None:
        if pending.timer is not None:
            pending.timer.cancel()

    def _expire(self, pending: _Pending) -> None:
        with self._lock:
            if self._pending is pending and not self._closed:
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
            self._core.keep(KEPT, None)  # after the restore: a crash between restores again
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


def _deadline(params: CommitParams) -> float:
    return time.time() + params.timeout


def _invalid(message: str) -> CatsError:
    return netconf_error("invalid-value", message, error_type=ErrorType.APPLICATION)
