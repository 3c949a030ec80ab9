"""The C-PS policy configuration an evaluation runs: YANG instance data, parsed by the C-PS's
own parsers.

The file is RFC 7951 JSON with up to three members: ``ietf-cats-service-metrics:
selection-policy`` and ``ietf-cats-service-metrics:update-control`` (the Joint Selection
Algorithm's requirement, fallback and update control, dispatch accounting included) and
``ietf-cats-agent-selection:agent-selection`` with its ``selection-context`` (combination,
stability, look-ahead horizon, banding). The service policy of CS-ID ``llm`` applies over the
default requirement. ``catsctl evaluate`` validates the file against the modules before it
runs; these functions parse what the schema already checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.agent_selection.config import context
from controller.evaluate.errors import invalid
from controller.evaluate.shipped import RECOMMENDED
from controller.evaluate.views import SERVICE
from controller.selection.joint import Requirement, SelectionSettings
from controller.selection.mapping import SelectionContext
from controller.service_metrics.policy import UpdateControl, config, requirement

"""The configuration recommended for LLM services (the tuned one of docs/evaluation.md)."""

SM = "ietf-cats-service-metrics"
AS = "ietf-cats-agent-selection"
MEMBERS = frozenset({f"{SM}:selection-policy", f"{SM}:update-control", f"{AS}:agent-selection"})


@dataclass(frozen=True, slots=True)
class CpsPolicy:
    """The parsed configuration: what the C-PS applies to every selection of CS-ID llm."""

    name: str
    requirement: Requirement
    settings: SelectionSettings
    update: UpdateControl
    context: SelectionContext
    document: dict[str, Any]


def parse(doc: dict[str, Any], name: str = "policy") -> CpsPolicy:
    """The C-PS policy from its (already validated) document."""
    unknown = sorted(set(doc) - MEMBERS)
    if unknown:
        raise invalid(f"unexpected member {unknown[0]!r}; expected {sorted(MEMBERS)}", name)
    policy = doc.get(f"{SM}:selection-policy", {})
    update = doc.get(f"{SM}:update-control", {})
    parsed = config(policy, update, {})
    selection = doc.get(f"{AS}:agent-selection", {}).get("selection-context", {})
    built, _ = context(selection)
    return CpsPolicy(
        name,
        requirement(parsed.requirement_document(SERVICE, {})),
        parsed.settings,
        parsed.update,
        built,
        doc,
    )


def load(path: Path = RECOMMENDED) -> CpsPolicy:
    """Read a policy file (JSON)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise invalid(f"cannot read the policy: {exc}", str(path)) from exc
    if not isinstance(doc, dict):
        raise invalid("expected a JSON object", str(path))
    return parse(doc, path.name)


def defaults() -> CpsPolicy:
    """The C-PS as shipped: every leaf at its YANG default."""
    return parse({}, "defaults")
