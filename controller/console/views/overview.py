"""The overview page: services, sites, forwarders, reporting agents, alarms."""

from __future__ import annotations

from flask import Blueprint, render_template

from controller.console.auth import cps, login_required
from controller.console.reads import overview_tables

blueprint = Blueprint("overview", __name__)


@blueprint.route("/")
@login_required
def index() -> str:
    """The overview."""
    return render_template("overview.html", tables=overview_tables(cps()), live="overview")
