"""Plots over time: TST per candidate, GAS per site, decisions per second, push latency."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from flask import Blueprint, render_template, request

from controller.console.auth import cps, login_required, settings
from controller.console.cps import Cps
from controller.console.pages.plots import PLOT_FILTER, TITLES, Choice, charts
from controller.console.pages.series import Recorder
from controller.console.pages.tables import SM, Json

blueprint = Blueprint("plots", __name__)


def tables(client: Cps) -> tuple[Json, Json]:
    """The CST and the NST now."""
    return (
        client.read_members(f"{SM}:computing-service-table"),
        client.read_members(f"{SM}:network-service-table"),
    )


def replayed(client: Cps, begin: float, end: float) -> Recorder:
    """The window's events from the C-PS's replay log, settled with the tables."""
    recorder = Recorder(begin)
    events = client.events(
        start_time=datetime.fromtimestamp(begin, UTC),
        stop_time=datetime.fromtimestamp(end, UTC),
        xpath_filter=PLOT_FILTER,
    )
    try:
        for event in events:
            if event.replay_complete:
                break
            recorder.add(event)
    finally:
        events.close()
    recorder.settle(*tables(client))
    return recorder


def choice(recorder: Recorder) -> Choice:
    """The service and ingress asked for, else the first known."""
    services, ingresses = recorder.services(), recorder.ingresses()
    cs_id = request.args.get("cs-id") or (services[0] if services else "")
    ingress = request.args.get("ingress") or (ingresses[0] if ingresses else "")
    return Choice(cs_id, ingress, settings().plot_window)


@blueprint.route("/plots")
@login_required
def index() -> str:
    """The four charts, drawn from the replayed window (then live)."""
    end = time.time()
    recorder = replayed(cps(), end - settings().plot_window, end)
    chosen = choice(recorder)
    return render_template(
        "plots.html",
        charts=charts(recorder, chosen, end),
        titles=TITLES,
        choice=chosen,
        services=recorder.services(),
        ingresses=recorder.ingresses(),
        live="plots",
        live_args={"cs-id": chosen.cs_id, "ingress": chosen.ingress},
    )
