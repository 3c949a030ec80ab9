"""The live endpoints: one server-sent event stream per open page (:mod:`controller.console.live`).

The browser's ``EventSource`` opens ``/live/PAGE`` with the page's own query (its sort,
filter, service); the stream answers as the logged-in user and ends with the session.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, abort, current_app, request, session

from controller.console.auth import client_for, login_required, settings
from controller.console.cps import Event
from controller.console.live import LivePage, relay
from controller.console.pages.plots import PLOT_FILTER, Choice, LivePlots
from controller.console.pages.series import Recorder
from controller.console.pages.tables import SM, Table, live_cells
from controller.console.reads import page_tables
from controller.console.sessions import ServerSession, ServerSessions
from controller.console.views.plots import tables as read_tables

blueprint = Blueprint("live", __name__)
ST = "ietf-cats-steering"
#: The notifications that make each page of tables refresh.
TABLE_EVENTS = {
    "overview": (
        f"{SM}:cst-entry-changed",
        f"{SM}:nst-entry-changed",
        f"{SM}:selection-decision",
        f"{SM}:report-refused",
        f"{ST}:forwarder-push",
    ),
    "cst": (f"{SM}:cst-entry-changed",),
    "nst": (f"{SM}:nst-entry-changed",),
    "decisions": (f"{SM}:selection-decision",),
}


class LiveTables:
    """A page of tables: read again after a relevant event; a notice when rows came or went
    (rows are never inserted under the reader's eyes: no layout shift)."""

    def __init__(self, read: Callable[[], list[Table]]) -> None:
        self._read = read
        self._shown = {table.name: {row.key for row in table.rows} for table in read()}

    def fold(self, event: Event) -> bool:
        """Any event of the filter concerns the page."""
        return not event.replay_complete

    def render(self) -> dict[str, Any]:
        """Every cell's text and age now, and what the shown rows miss."""
        texts: dict[str, str] = {}
        ages: dict[str, int] = {}
        moved = 0
        for table in self._read():
            cells, aged = live_cells(table)
            texts |= cells
            ages |= aged
            keys = {row.key for row in table.rows}
            moved += len(keys ^ self._shown.get(table.name, keys))
        notice = f"{moved} rows came or went since this page was loaded: reload" if moved else ""
        return {"cells": texts, "ages": ages, "notice": notice}


def _filter(names: tuple[str, ...]) -> str:
    return " | ".join(f"/{name}" for name in names)


@blueprint.route("/live/<page>")
@login_required
def stream(page: str) -> Response:
    """The event stream of a page."""
    if page != "plots" and page not in TABLE_EVENTS:
        abort(404)
    client = client_for(session["user"], session["password"])
    args = request.args.to_dict()
    live: LivePage
    if page == "plots":
        window = settings().plot_window
        begin = time.time() - window
        chosen = Choice(args.get("cs-id", ""), args.get("ingress", ""), window)
        live = LivePlots(Recorder(begin), chosen, lambda: read_tables(client))
        start = datetime.fromtimestamp(begin, UTC)
        events = client.events(start_time=start, xpath_filter=PLOT_FILTER)
    else:
        live = LiveTables(lambda: page_tables(page, client, args))
        events = client.events(xpath_filter=_filter(TABLE_EVENTS[page]))
    interface = current_app.session_interface
    assert isinstance(interface, ServerSessions)
    assert isinstance(session, ServerSession)
    store, sid, interval = interface.store, session.sid, settings().live_interval

    def body() -> Iterator[bytes]:
        try:
            yield from relay(events, live, alive=lambda: store.alive(sid), interval=interval)
        finally:
            client.close()

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return Response(body(), mimetype="text/event-stream", headers=headers)
