"""The configuration page: running policy, commit history, compare, and rollback confirmed
by the diff it will apply (cats-controller-admin ``compare`` and ``rollback``, run by the C-PS
as the logged-in user under its access control)."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from controller.console.auth import cps, login_required
from controller.console.pages import config as shape

blueprint = Blueprint("config", __name__, url_prefix="/config")
COMMITS = f"{shape.ADMIN}:commits"


def _commit_id(text: str | None) -> str:
    if not text or not text.isdigit():
        abort(400, "a commit id (a number) is needed")
    return text


@blueprint.route("/")
@login_required
def index() -> str:
    """The running policy and the commit history."""
    client = cps()
    policy = [client.read_members(path, content="config") for path in shape.POLICY]
    history = shape.history(client.read_members(COMMITS))
    return render_template("config.html", policy=shape.policy_text(policy), history=history)


@blueprint.route("/compare")
@login_required
def compare() -> str:
    """The changes from ``source`` to ``target`` (a commit id, or a datastore)."""
    source = request.args.get("source", "")
    target = request.args.get("target", "running")
    allowed = ("running", "candidate", "startup")
    if not (source.isdigit() or source in allowed) or not (target.isdigit() or target in allowed):
        abort(400, "source and target: a commit id, running, candidate or startup")
    result = cps().invoke_members(shape.ADMIN, "compare", {"source": source, "target": target})
    return render_template(
        "compare.html",
        source=source,
        target=target,
        changes=result.get("changes", 0),
        lines=shape.diff_lines(result),
    )


@blueprint.route("/rollback", methods=["GET"])
@login_required
def preview() -> str:
    """What rolling back to a commit would change (a dry run), and a form to confirm it."""
    commit_id = _commit_id(request.args.get("to"))
    client = cps()
    latest = shape.latest_commit(client.read_members(COMMITS))
    result = client.invoke_members(
        shape.ADMIN, "rollback", {"commit-id": commit_id, "dry-run": [None]}
    )
    return render_template(
        "rollback.html",
        commit_id=commit_id,
        latest=latest,
        changes=result.get("changes", 0),
        lines=shape.diff_lines(result),
    )


@blueprint.route("/rollback", methods=["POST"])
@login_required
def rollback() -> str | BaseResponse:
    """Roll back, as confirmed; refused when running changed since the preview (the diff
    shown would not be the one applied)."""
    commit_id = _commit_id(request.form.get("to"))
    client = cps()
    latest = shape.latest_commit(client.read_members(COMMITS))
    if latest != request.form.get("latest", ""):
        flash(
            f"running changed since the preview (commit {latest}): review the rollback again",
            "warning",
        )
        return redirect(url_for("config.preview", to=commit_id))
    members: dict[str, object] = {"commit-id": commit_id}
    comment = request.form.get("comment", "").strip()
    if comment:
        members["comment"] = comment[:1024]
    result = client.invoke_members(shape.ADMIN, "rollback", members)
    return render_template(
        "rolled-back.html",
        commit_id=commit_id,
        made=result.get("commit-id"),
        changes=result.get("changes", 0),
        lines=shape.diff_lines(result),
    )
