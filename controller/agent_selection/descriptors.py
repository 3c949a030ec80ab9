"""MSG-1/MSG-2 descriptor members (7.1) to the core's :class:`Descriptor` (P2).

Absent elements stay absent (unknown, 7.5); :func:`missing` names what the network cannot
derive for itself, which the C-PS asks the gateway to refine (MSG-3). Times are converted
from milliseconds, identities lose their prefix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from controller.agent_selection.decide import note
from controller.agent_selection.values import ident, integer, number, qualified, seconds
from controller.selection.mapping import (
    Budget,
    Descriptor,
    Endpoint,
    Locality,
    Objective,
    RequiredModel,
    WorkingSetElement,
)
from controller.selection.mapping.vocabulary import (
    BudgetDimension,
    BudgetKind,
    CommunicationMode,
    DegradationClass,
    DeterminismClass,
    Element,
    ElementClass,
    EndpointKind,
    ObjectiveQuantity,
    Precision,
    Role,
    Scope,
)
from controller.types import CsId, Json, Prefix, RegionId, ReuseKey, SessionId, TenantId, TierName

_ELEMENTS = {member.value: member for member in Element}


def _regions(values: Iterable[Any] | None) -> frozenset[RegionId]:
    return frozenset(RegionId(str(v)) for v in values or ())


def element(doc: Mapping[str, Any]) -> WorkingSetElement:
    """One working-set element (6.3, 7.1)."""
    divergence = doc.get("acceptable-divergence", {})
    tokens = doc.get("tokens-to-reprocess", doc.get("tokens"))
    return WorkingSetElement(
        ReuseKey(str(doc["reuse-key"])),
        ElementClass(ident(doc["element-class"])),
        integer(doc.get("element-size")),
        integer(tokens),
        Role(str(doc.get("role", "preference"))),
        sufficient=bool(doc.get("sufficient", True)),
        may_move=bool(doc.get("may-move", True)),
        permitted_regions=_regions(doc.get("permitted-region")),
        max_age=seconds(doc.get("max-age")),
        max_missing_fraction=number(divergence.get("max-missing-fraction")),
    )


def working_set(doc: Mapping[str, Any] | None) -> tuple[WorkingSetElement, ...]:
    """The elements of a ``working-set`` container."""
    return tuple(element(e) for e in (doc or {}).get("element", ()))


def _budget(doc: Mapping[str, Any]) -> Budget:
    dimension = BudgetDimension(ident(doc["dimension"]))
    scale = seconds if dimension is BudgetDimension.TIME else number
    remaining = scale(doc.get("remaining"))
    return Budget(
        dimension,
        Scope(str(doc["scope"])),
        scale(doc["limit"]) or 0.0,
        BudgetKind(str(doc["kind"])),
        remaining,
    )


def _objective(doc: Mapping[str, Any]) -> Objective:
    percentile = None if "mean" in doc else number(doc.get("percentile", 95))
    return Objective(
        ObjectiveQuantity(ident(doc["quantity"])),
        seconds(doc["target"]) or 0.0,
        percentile,
        seconds(doc.get("window")),
        Scope(str(doc.get("scope", "step"))),
        number(doc.get("weight")) or 1.0,
        Role(str(doc.get("role", "preference"))),
    )


def _endpoint(doc: Mapping[str, Any]) -> Endpoint:
    kind = doc.get("kind")
    return Endpoint(
        Prefix(str(doc["prefix"])),
        str(doc.get("name", "")),
        None if kind is None else EndpointKind(ident(kind)),
        Role(str(doc.get("role", "constraint"))),
        integer(doc.get("expected-calls")) or 1,
        parallel=bool(doc.get("parallel", False)),
    )


def _model(doc: Mapping[str, Any] | None) -> RequiredModel | None:
    if not doc:
        return None
    return RequiredModel(
        doc.get("name"), doc.get("version"), frozenset(str(a) for a in doc.get("adapter", ()))
    )


def _freshness(entries: Sequence[Mapping[str, Any]]) -> tuple[tuple[Element, float], ...]:
    found: list[tuple[Element, float]] = []
    for entry in entries:
        name = _ELEMENTS.get(ident(entry["element"]))
        age = seconds(entry["max-age"])
        if name is not None and age is not None:
            found.append((name, age))
    return tuple(found)


def descriptor(doc: Mapping[str, Any], *, step_id: int | None = None) -> Descriptor:
    """The core descriptor of a ``descriptor`` container; ``step_id`` stands in when the
    descriptor names none (the whole turn as one step, P1)."""
    tolerance = doc.get("tolerance", {})
    preferences = doc.get("preferences", {})
    tail = doc.get("tail-tolerance")
    mode = doc.get("mode")
    determinism = doc.get("required-determinism")
    tier = doc.get("capability-tier")
    context_length = doc.get("context-length")
    given_step = integer(doc.get("step-id"))
    return Descriptor(
        CsId(str(doc["service-id"])),
        SessionId(str(doc["session-id"])),
        TenantId(str(doc["tenant"])),
        integer(doc.get("turn-id")),
        given_step if given_step is not None else step_id,
        None if tier is None else TierName(str(tier)),
        frozenset(Precision(ident(p)) for p in doc.get("required-precision", ())),
        None if context_length is None else integer(context_length["hi"]),
        _model(doc.get("required-model")),
        None if determinism is None else DeterminismClass(ident(determinism)),
        working_set(doc.get("working-set")),
        tuple(
            Locality(
                ElementClass(ident(e["element-class"])),
                _regions(e.get("permitted-region")),
                Scope(str(e.get("scope", "session"))),
            )
            for e in doc.get("locality", ())
        ),
        tuple(_budget(b) for b in doc.get("budget", ())),
        tuple(_objective(o) for o in doc.get("objective", ())),
        None if tail is None else number(tail["max"]),
        tuple(DegradationClass(ident(d)) for d in doc.get("degradation", ())),
        _freshness(doc.get("freshness-need", ())),
        integer(doc.get("horizon")),
        integer(doc.get("remaining-horizon")),
        None if mode is None else CommunicationMode(ident(mode)),
        tuple(_endpoint(e) for e in doc.get("endpoint", ())),
        number(preferences.get("state-reuse-weight")),
        seconds(tolerance.get("max-added-delay")),
        Scope(str(doc.get("scope", "step"))),
    )


def missing(desc: Descriptor) -> list[tuple[Element, str]]:
    """What the network cannot derive and the gateway should refine (P2, MSG-3, M40)."""
    found: list[tuple[Element, str]] = []
    if desc.capability_tier is None:
        found.append((Element.CAPABILITY_TIER, "no capability tier: every tier is eligible"))
    if not desc.objectives:
        found.append((Element.OBJECTIVE, "no step objective: the tail cannot be bounded"))
    sizeless = [e.reuse_key for e in desc.working_set if e.element_size is None]
    tokenless = [e.reuse_key for e in desc.working_set if e.tokens_to_reprocess is None]
    if sizeless or tokenless:
        keys = ", ".join(sorted({*sizeless, *tokenless}))
        found.append((Element.WORKING_SET, f"size or tokens unknown for {keys}"))
    return found


def revised(
    doc: Json, working: Sequence[Mapping[str, Any]] | None, turn: int | None, step: int | None
) -> Json:
    """The stored descriptor members revised between steps (P2, M14): the accumulated working
    set of MSG-2 and the attribution of the new step replace the old ones."""
    updated = dict(doc)
    if working is not None:
        updated["working-set"] = {"element": list(working)} if working else {}
    if turn is not None:
        updated["turn-id"] = turn
    if step is not None:
        updated["step-id"] = step
    return updated


def refinement_requests(desc: Descriptor, doc: Json) -> list[Json]:
    """descriptor-refinement-request (MSG-3) for each element the network cannot derive: the
    C-PS asks the gateway; unanswered, the element stays unknown (P2, M40)."""
    found: list[Json] = []
    for absent, reason in missing(desc):
        members: Json = {
            "session-id": doc["session-id"],
            "element": qualified(absent.value),
            "scope": str(doc.get("scope", "step")),
            "reason": reason,
        }
        for name in ("turn-id", "step-id"):
            if name in doc:
                members[name] = doc[name]
        found.append(note("descriptor-refinement-request", members))
    return found
