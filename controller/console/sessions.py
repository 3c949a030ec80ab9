"""Server-side sessions: the browser holds a random session id, nothing else.

Flask's default session is a signed cookie that carries its contents to the browser; the
console keeps them (the operator's login, the CSRF secret) in memory here instead, keyed by
an unguessable id (``secrets.token_urlsafe``), dropped after ``idle`` seconds without a
request and at logout. The cookie is ``HttpOnly``, ``SameSite=Strict`` and ``Secure`` when
the console serves HTTPS. A login gets a new id (no session fixation).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SessionInterface, SessionMixin
from werkzeug.datastructures import CallbackDict

COOKIE = "cats_console"
MAX_SESSIONS = 10_000


class ServerSession(CallbackDict[str, Any], SessionMixin):
    """A session's contents, known by its id."""

    def __init__(self, sid: str, initial: dict[str, Any] | None = None) -> None:
        def changed(_: CallbackDict[str, Any]) -> None:
            self.modified = True

        super().__init__(initial or {}, changed)
        self.sid = sid
        self.modified = False
        self.renew = False

    def regenerate(self) -> None:
        """Take a new id when the session is saved (at login)."""
        self.renew = True
        self.modified = True


class SessionStore:
    """Sessions in memory, with an idle timeout and a bound on their number."""

    def __init__(self, idle: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._idle = idle
        self._clock = clock
        self._lock = threading.Lock()
        self._data: dict[str, tuple[float, dict[str, Any]]] = {}

    def load(self, sid: str) -> dict[str, Any] | None:
        """The contents of a live session (and it is touched), or None."""
        now = self._clock()
        with self._lock:
            found = self._data.get(sid)
            if found is None or now - found[0] > self._idle:
                self._data.pop(sid, None)
                return None
            self._data[sid] = (now, found[1])
            return dict(found[1])

    def save(self, sid: str, contents: dict[str, Any]) -> None:
        """Store a session's contents."""
        now = self._clock()
        with self._lock:
            if len(self._data) >= MAX_SESSIONS:
                self._prune(now)
            self._data[sid] = (now, dict(contents))

    def drop(self, sid: str) -> None:
        """Forget a session."""
        with self._lock:
            self._data.pop(sid, None)

    def alive(self, sid: str) -> bool:
        """Whether the session exists and is not idle past its timeout (not touched)."""
        with self._lock:
            found = self._data.get(sid)
            return found is not None and self._clock() - found[0] <= self._idle

    def _prune(self, now: float) -> None:
        for sid in [s for s, (seen, _) in self._data.items() if now - seen > self._idle]:
            del self._data[sid]
        if len(self._data) >= MAX_SESSIONS:  # anonymous sessions flooding: oldest go first
            for sid, _ in sorted(self._data.items(), key=lambda item: item[1][0])[:1000]:
                del self._data[sid]


class ServerSessions(SessionInterface):
    """Flask's session interface over a :class:`SessionStore`."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store

    def open_session(self, app: Flask, request: Request) -> ServerSession:
        """The session of the request's cookie, or a new empty one."""
        sid = request.cookies.get(COOKIE, "")
        contents = self.store.load(sid) if sid else None
        if contents is None:
            return ServerSession(secrets.token_urlsafe(32))
        return ServerSession(sid, contents)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        """Store the contents and set the cookie (only the id)."""
        assert isinstance(session, ServerSession)
        if not session and not session.modified:
            return
        if session.renew:
            self.store.drop(session.sid)
            session.sid = secrets.token_urlsafe(32)
            session.renew = False
        if not session:
            self.store.drop(session.sid)
            response.delete_cookie(COOKIE, path="/")
            return
        self.store.save(session.sid, dict(session))
        response.set_cookie(
            COOKIE,
            session.sid,
            httponly=True,
            secure=bool(app.config.get("SESSION_COOKIE_SECURE")),
            samesite="Strict",
            path="/",
        )
