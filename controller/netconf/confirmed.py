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

In a C-PS cluster the pending commit is the cluster's (:class:`SharedPending`, an etcd key;
docs/cluster.md "Confirmed commits"): each step reads it, and changes it only if it is as read,
so that a persisted one is confirmed or cancelled from any replica, and it is rolled back once
(the replica whose claim of the key wins makes the rollback, one cluster commit past the
locks). The replica that took it arms its timer; the leader sweeps it too, so that it is rolled
back when its deadline passes, or, without ``persist``, when the holder's replica is gone.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

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
#: How often the cluster's leader looks at the cluster's pending confirmed commit.
SWEEP_S = 0.5


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
    node: str = ""  # the cluster replica that took it ("" without a cluster)
    timer: threading.Timer | None = field(default=None, repr=False)

    def document(self) -> str:
        """What the core keeps of it."""
        kept: dict[str, object] = {
            "backup": self.backup,
            "session-id": self.owner.session_id,
            "user": self.owner.user,
            "persist": self.persist,
            "deadline": datetime.fromtimestamp(self.deadline, UTC).isoformat(),
        }
        if self.node:
            kept["node"] = self.node
        return json.dumps(kept)

    @classmethod
    def from_document(cls, document: str) -> _Pending:
        """The inverse of :meth:`document`."""
        kept = json.loads(document)
        owner = Actor(int(kept["session-id"]), str(kept["user"]))
        deadline = datetime.fromisoformat(str(kept["deadline"])).timestamp()
        persist = None if kept.get("persist") is None else str(kept["persist"])
        return cls(str(kept["backup"]), owner, persist, deadline, str(kept.get("node", "")))


def due(pending: _Pending, *, holder_alive: bool, now: float) -> str | None:
    """Why the cluster's pending confirmed commit is to be rolled back now ("cancel": it was
    not given persist and the replica of its session is gone, 8.4.1; "timeout": its deadline
    passed), or None while it stays pending."""
    if pending.persist is None and not holder_alive:
        return "cancel"
    if pending.deadline <= now:
        return "timeout"
    return None


class SharedPending(Protocol):
    """The cluster's one pending confirmed commit (controller.cluster.confirmed): a document,
    and a token that changes with each change of it (etcd's mod revision). Every change is
    made only if the document is still as read (its token), so that exactly one replica takes
    each step. Failures to reach the cluster raise a CatsError (``unavailable``)."""

    node: str

    def load(self) -> tuple[str, int, bool] | None:
        """The pending commit's document, its token, whether its holder is alive (its
        replica's lease holds, or it was given persist); None when none is pending."""
        ...

    def start(self, document: str, *, bound: bool) -> int | None:
        """Record a new pending commit if none is (``bound``: it ends with this replica's
        lease, having no persist); its token, or None when another one is pending."""
        ...

    def replace(self, document: str, token: int, *, bound: bool) -> int | None:
        """Replace the pending commit if it is still as read; its new token, or None."""
        ...

    def claim(self, token: int) -> bool:
        """Forget the pending commit if it is still as read; whether this call did."""
        ...

    def leads(self) -> bool:
        """Whether this replica leads the cluster (it sweeps the pending commit)."""
        ...


#: Publishes one notification document (RFC 7951 JSON) on the NETCONF stream.
Events = Callable[[str], None]


class ConfirmedCommits:
    """The one confirmed commit a server may have in progress."""

    def __init__(
        self, core: ServerCore, events: Events, shared: SharedPending | None = None
    ) -> None:
        self._core = core
        self._events = events
        self._lock = threading.RLock()
        self._pending: _Pending | None = None
        self._closed = False
        #: The cluster's pending commit (None: this server's own, kept by the core)
        self._shared = shared
        self._owned: set[int] = set()  # sessions here with a shared commit without persist
        self._timer: threading.Timer | None = None  # the shared commit taken here
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    @property
    def pending(self) -> bool:
        """Whether a confirmed commit waits for its confirmation (read under the lock, so a
        rollback in progress is seen finished, running and the kept backup restored)."""
        with self._lock:
            if self._shared is not None:
                return self._shared.load() is not None
            return self._pending is not None

    def resume(self) -> None:
        """Take up the confirmed commit pending before a restart (or a crash), if any; in a
        cluster, start sweeping the cluster's one (the leader rolls it back when due)."""
        if self._shared is not None:
            self._sweeper = threading.Thread(
                target=self._sweep_loop, name="confirmed-sweep", daemon=True
            )
            self._sweeper.start()
            return
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
            if self._shared is not None:
                self._commit_shared(self._shared, actor, principal, params)
                return
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
            if self._shared is not None:
                self._cancel_shared(self._shared, actor, persist_id)
                return
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
            if self._shared is not None:
                if actor.session_id in self._owned:
                    self._owned.discard(actor.session_id)
                    self._session_ended_shared(self._shared, actor)
                return
            if pending and pending.persist is None and pending.owner.session_id == actor.session_id:
                self._rollback(pending, "cancel", actor)

    def close(self) -> None:
        """Stop the timer (the server is stopping; the commit stays pending on disk, for
        :meth:`resume` at the next start)."""
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=10)
        with self._lock:
            self._closed = True
            if self._pending is not None:
                self._stop_timer(self._pending)
            if self._timer is not None:
                self._timer.cancel()

    # ---------------------------------------------------------------- the cluster's

    def _load(self, shared: SharedPending) -> tuple[_Pending, int, bool] | None:
        found = shared.load()
        if found is None:
            return None
        document, token, alive = found
        return _Pending.from_document(document), token, alive

    def _commit_shared(
        self, shared: SharedPending, actor: Actor, principal: Principal, params: CommitParams
    ) -> None:
        found = self._load(shared)
        session = str(actor.session_id)
        if found is None:
            self._start_shared(shared, actor, principal, params)
            return
        pending, token, _ = found
        self._check_owner(pending, actor, params.persist_id)
        if pending.persist is None and pending.node != shared.node:
            raise _another()  # session ids are the cluster's, session 0 (RESTCONF) is not
        if params.confirmed:
            persist = params.persist if params.persist is not None else pending.persist
            extended = _Pending(pending.backup, actor, persist, _deadline(params), shared.node)
            if shared.replace(extended.document(), token, bound=persist is None) is None:
                raise _gone()
            try:
                self._core.commit(principal, session=session)
            except BaseException:
                shared.start(pending.document(), bound=pending.persist is None)  # as it was
                raise
            self._started_shared(extended, params, "extend")
            return
        if not shared.claim(token):  # confirmed here, so that no rollback comes after
            raise _gone()
        try:
            self._core.commit(principal, session=session)
        except BaseException:
            shared.start(pending.document(), bound=pending.persist is None)  # pending as it was
            raise
        self._owned.discard(pending.owner.session_id)
        self._announce("complete", actor)

    def _start_shared(
        self, shared: SharedPending, actor: Actor, principal: Principal, params: CommitParams
    ) -> None:
        """A plain or confirmed commit while none is pending in the cluster."""
        session = str(actor.session_id)
        if params.persist_id is not None:
            raise _invalid("no confirmed commit with that persist-id is in progress")
        if not params.confirmed:
            self._core.commit(principal, session=session)
            return
        started = _Pending(self._save(), actor, params.persist, _deadline(params), shared.node)
        token = shared.start(started.document(), bound=params.persist is None)  # before running
        if token is None:
            raise _another()
        try:
            self._core.commit(principal, session=session)
        except BaseException:
            shared.claim(token)
            raise
        self._started_shared(started, params, "start")

    def _started_shared(self, pending: _Pending, params: CommitParams, event: str) -> None:
        if pending.persist is None:
            self._owned.add(pending.owner.session_id)
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(params.timeout, self._sweep)
        self._timer.daemon = True
        self._timer.start()
        self._announce(event, pending.owner, params.timeout)

    def _cancel_shared(self, shared: SharedPending, actor: Actor, persist_id: str | None) -> None:
        found = self._load(shared)
        if found is None:
            raise netconf_error(
                "operation-failed",
                "no confirmed commit is in progress",
                error_type=ErrorType.APPLICATION,
            )
        pending, token, _ = found
        self._check_owner(pending, actor, persist_id)
        if pending.persist is None and pending.node != shared.node:
            raise _another()
        if not shared.claim(token):
            raise _gone()
        if not self._restore(pending, "cancel", actor):
            raise netconf_error(
                "rollback-failed",
                "running could not be put back; the confirmed commit's changes stay",
                error_type=ErrorType.APPLICATION,
            )

    def _session_ended_shared(self, shared: SharedPending, actor: Actor) -> None:
        try:
            found = self._load(shared)
            if found is None:
                return
            pending, token, _ = found
            mine = pending.node == shared.node and pending.owner.session_id == actor.session_id
            if pending.persist is None and mine and shared.claim(token):
                self._restore(pending, "cancel", actor)
        except CatsError:  # the leader rolls it back once the holder's lease is gone
            LOG.exception("the confirmed commit of an ended session not rolled back here")

    def _sweep_loop(self) -> None:
        while not self._stop.wait(SWEEP_S):
            shared = self._shared
            try:
                if shared is not None and shared.leads():
                    self._sweep()
            except Exception:  # the sweep goes on
                LOG.exception("the sweep of the cluster's confirmed commit failed")

    def _sweep(self) -> None:
        """Roll the cluster's pending commit back if it is due and this replica claims it."""
        shared = self._shared
        with self._lock:
            if shared is None or self._closed:
                return
            try:
                found = self._load(shared)
                if found is None:
                    return
                pending, token, alive = found
                event = due(pending, holder_alive=alive, now=time.time())
                if event is None or not shared.claim(token):
                    return
                self._owned.discard(pending.owner.session_id)
                LOG.warning(
                    "the confirmed commit of session %d on %s is rolled back (%s)",
                    pending.owner.session_id,
                    pending.node,
                    "its session or replica is gone" if event == "cancel" else "timeout",
                )
                self._restore(pending, event, None)
            except CatsError:
                LOG.exception("the cluster's confirmed commit was not swept")

    def _restore(self, pending: _Pending, event: str, actor: Actor | None) -> bool:
        """Put running back (the pending commit claimed: exactly once in the cluster); when the
        core refuses, it is recorded again, bound to no lease, so that the leader's sweep tries
        again (a persisted one stays pending until its deadline)."""
        try:
            with annotated(operation=f"confirmed-commit-{event}", comment=_ROLLED_BACK[event]):
                self._core.restore(DatastoreName.RUNNING, pending.backup, Encoding.JSON)
        except CatsError:
            LOG.exception("the rollback of a confirmed commit failed")
            if self._shared is not None:
                try:
                    self._shared.start(pending.document(), bound=False)
                except CatsError:
                    LOG.exception("the confirmed commit whose rollback failed is lost")
            return False
        self._announce(event, actor or pending.owner)
        return True

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


def _another() -> CatsError:
    return netconf_error(
        "operation-failed",
        "another session's confirmed commit is in progress",
        error_type=ErrorType.APPLICATION,
    )


def _gone() -> CatsError:
    return netconf_error(
        "operation-failed",
        "the confirmed commit was confirmed, cancelled or rolled back meanwhile",
        error_type=ErrorType.APPLICATION,
    )


def _invalid(message: str) -> CatsError:
    return netconf_error("invalid-value", message, error_type=ErrorType.APPLICATION)
