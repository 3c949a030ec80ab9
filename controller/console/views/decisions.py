"""Decisions of the joint selection and agent sessions: lists with filters, a page each."""

from __future__ import annotations

from urllib.parse import quote

from flask import Blueprint, abort, render_template, request

from controller.console.auth import cps, login_required
from controller.console.pages import decisions as shape
from controller.console.pages import sessions as agent
from controller.console.reads import decision_filters, decision_table

blueprint = Blueprint("decisions", __name__)


@blueprint.route("/decisions")
@login_required
def index() -> str:
    """The kept decisions, newest first, filtered by the query's fields."""
    args = request.args.to_dict()
    return render_template(
        "decisions.html",
        table=decision_table(cps(), args),
        filters=decision_filters(args),
        limit=shape.LIMIT,
        live="decisions",
    )


@blueprint.route("/decisions/<ident>")
@login_required
def one(ident: str) -> str:
    """One decision: every candidate's TST as computing + network, exclusions, objective."""
    if not ident.isdigit():
        abort(404)
    document = cps().read_members(f"{shape.DECISIONS}/decision={ident}")
    view = shape.decision_view(document)
    if view is None:
        abort(404)
    return render_template("decision.html", view=view)


@blueprint.route("/sessions")
@login_required
def sessions() -> str:
    """The agent sessions (agent draft 6.8, 9)."""
    document = cps().read_members(agent.SESSIONS, depth="2")
    return render_template("sessions.html", rows=agent.session_rows(document))


@blueprint.route("/sessions/<path:session_id>")
@login_required
def session_page(session_id: str) -> str:
    """One agent session: its decision records and its timeline."""
    document = cps().read_members(f"{agent.SESSIONS}/session={quote(session_id, safe='')}")
    found = agent.one_session(document)
    if found is None:
        abort(404)
    records = [agent.record_view(r) for r in found.get("decision-record", [])]
    return render_template(
        "session.html",
        session_id=session_id,
        found=found,
        records=records,
        timeline=agent.timeline(found),
    )
