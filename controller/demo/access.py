"""Stage N: access control (RFC 8341) as the demo's processes meet it.

Every process logs in to the C-PS as its own user, in its role's group of the shipped
least-privilege policy (controller.auth.policy). The C-NMA's user may report network metrics
and advertise forwarding views; here it tries to write the selection policy, as a compromised
agent would, and is refused with ``access-denied`` while the policy stays as it was.
"""

from __future__ import annotations

import json

import requests

from controller.demo.client import JSON, TIMEOUT_S
from controller.demo.steps import Run, Stage, Step

SM = "ietf-cats-service-metrics"
POLICY = f"{SM}:selection-policy"
FORBIDDEN = 403


def agent_write_refused(run: Run) -> Step:
    """The C-NMA's user writes the selection policy: 403 access-denied, nothing changed."""
    title = "an agent's write of the selection policy is refused (access-denied)"
    before = run.bed.cps.get(POLICY)
    attempt = {POLICY: {"default-requirement": {"hard-constraints": {"max-price": 1}}}}
    reply = requests.patch(
        f"{run.bed.cps.root}/data/{POLICY}",
        data=json.dumps(attempt),
        auth=("cnma", run.bed.settings.agent_password),
        headers={"Content-Type": JSON, "Accept": JSON},
        timeout=TIMEOUT_S,
    )
    after = run.bed.cps.get(POLICY)
    errors = reply.json().get("ietf-restconf:errors", {}).get("error", []) if reply.text else []
    error = errors[0] if errors else {}
    lines = (
        f"    cnma (group cnma): PATCH /restconf/data/{POLICY} -> {reply.status_code} "
        f"{error.get('error-tag', '')} at {error.get('error-path', '-')}",
        "    the selection policy as the administrator reads it: "
        + ("unchanged" if after == before else "CHANGED"),
    )
    problems = []
    if reply.status_code != FORBIDDEN or error.get("error-tag") != "access-denied":
        problems.append(f"expected 403 access-denied, got {reply.status_code} {reply.text}")
    if after != before:
        problems.append("the selection policy changed")
    return Step("N", title, lines, tuple(problems))


ACCESS_CONTROL = Stage("N", "Access control (RFC 8341)", (agent_write_refused,))
