"""The CST and NST pages: sortable, filterable tables (links and a GET form: no script)."""

from __future__ import annotations

from flask import Blueprint, render_template, request

from controller.console.auth import cps, login_required
from controller.console.reads import TABLES, service_table

blueprint = Blueprint("tables", __name__)


@blueprint.route("/<any(cst, nst):name>")
@login_required
def show(name: str) -> str:
    """The CST or the NST."""
    table = service_table(cps(), name, request.args.to_dict())
    return render_template("table.html", table=table, title=TABLES[name][2], live=name)
