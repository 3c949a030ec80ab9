"""Live pages: the C-PS's NETCONF stream, read as the logged-in user, relayed to the browser.

Each open page holds one subscription to the C-PS (RESTCONF ``streams/json/NETCONF`` with an
XPath filter naming the notifications that concern it, RFC 8040 6.3, 4.8.4) and one
server-sent event stream to the browser. Nothing polls: a notification marks the page dirty,
and at most once per ``interval`` the page is read again (tables) or re-drawn (plots), and only
what changed is sent, as JSON: ``cells`` (id -> text), ``ages`` (id -> ms), ``charts``
(id -> SVG) and ``notice``. The stream ends when the session does (logout, idle timeout) or the
browser goes away (a heartbeat every ``heartbeat`` seconds finds out).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from controller.console.cps import CpsError, Event, Events

LOG = logging.getLogger("catsctl.console")
HEARTBEAT_S = 15.0
CHECK_S = 2.0
_END = object()


class LivePage(Protocol):
    """What a page does with the events that concern it."""

    def fold(self, event: Event) -> bool:
        """Take an event in; whether the page must be refreshed."""
        ...

    def render(self) -> dict[str, dict[str, Any] | str]:
        """The page's live parts now: ``cells``, ``ages``, ``charts``, ``notice``."""
        ...


def sse(payload: dict[str, Any]) -> bytes:
    """One server-sent event with a JSON payload."""
    return f"data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


def _pump(events: Events, out: queue.Queue[object]) -> None:
    try:
        for event in events:
            out.put(event)
    except CpsError as exc:  # the C-PS refused or went away
        LOG.info("console: live stream ended: %s", exc)
    finally:
        out.put(_END)


def changes(before: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """What differs in ``now`` from ``before``, part by part (a notice always counts)."""
    sent: dict[str, Any] = {}
    for part, value in now.items():
        if isinstance(value, dict):
            old = before.get(part) or {}
            delta = {k: v for k, v in value.items() if old.get(k) != v}
            if delta:
                sent[part] = delta
        elif value != before.get(part):
            sent[part] = value
    return sent


def relay(  # noqa: PLR0913 - the stream, the page, and keyword settings
    events: Events,
    page: LivePage,
    *,
    alive: Callable[[], bool],
    interval: float,
    heartbeat: float = HEARTBEAT_S,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[bytes]:
    """The browser's event stream of one page."""
    pending: queue.Queue[object] = queue.Queue()
    threading.Thread(target=_pump, args=(events, pending), daemon=True).start()
    last: dict[str, Any] = {}
    dirty = False
    sent_at = beat_at = clock()
    try:
        yield b": live\n\n"
        while alive():
            now = clock()
            wait = CHECK_S
            if dirty:
                wait = max(0.0, min(wait, sent_at + interval - now))
            try:
                item = pending.get(timeout=wait)
            except queue.Empty:
                item = None
            if item is _END:
                break
            if isinstance(item, Event):
                dirty = page.fold(item) or dirty
            now = clock()
            if dirty and now - sent_at >= interval:
                dirty = False
                sent_at = beat_at = now
                try:
                    current = page.render()
                except CpsError as exc:
                    LOG.info("console: live refresh refused: %s", exc)
                    break
                delta = changes(last, current)
                last = {**last, **current}
                if delta:
                    yield sse(delta)
            elif now - beat_at >= heartbeat:
                beat_at = now
                yield b": heartbeat\n\n"
    finally:
        events.close()
