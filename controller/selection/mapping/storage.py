"""The storage dimension, element by element (6.3, 6.7; M4, M5, M22-M24, M49).

For every candidate: which elements of the working set it holds usably (fresh, attributed,
in accelerator memory or with a known retrieval cost; :mod:`scan`), what is missing, and the
cost of making the missing part usable: transfer (from a candidate that holds it) or
recompute, by the relations of :mod:`relations`. An element no candidate holds can only be
recomputed. The working set is prepared once per decision (:class:`PreparedWorkingSet`); a
candidate then costs one dictionary probe per element it might hold, so a decision over many
candidates does not allocate per element.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.selection.mapping.descriptor import WorkingSetElement
from controller.selection.mapping.findings import Exclusion, QualifiedValue, reported, unusable
from controller.selection.mapping.relations import recompute_time, state_cost, transfer_time
from controller.selection.mapping.scan import (
    ACCEL,
    FORCED,
    STATE,
    TOKENS,
    Held,
    Scans,
    scan,
)
from controller.selection.mapping.view import ResourceView
from controller.selection.mapping.vocabulary import (
    NOT_RECOMPUTABLE,
    Element,
    ElementClass,
    Presence,
    Reason,
)
from controller.selection.mapping.workingset import Key, PreparedWorkingSet, Totals
from controller.selection.units import Timestamp
from controller.types import CsciId


@dataclass(frozen=True, slots=True)
class Link:
    """The transfer and rebuild rates towards one candidate: 'bw', 'rtt', 'prefill_rate'."""

    bw: float | None
    rtt: float | None
    prefill_rate: float | None
    transfer_open: bool = True


@dataclass(frozen=True, slots=True)
class StoragePlan:
    """The storage valuation of one candidate (P5) and the exclusions it implies (P4).

    ``needed_accelerator_bytes`` is the part of the working set that still has to be placed in
    accelerator memory (None: unknown); it is the 'state_bytes' of the state_fits relation.
    ``state_cost`` includes the retrieval of elements held below accelerator memory.
    """

    missing_bytes: int | None
    needed_accelerator_bytes: int | None
    transfer_time: float | None
    recompute_time: float | None
    retrieval: float
    state_cost: float | None
    held: int
    exclusions: tuple[Exclusion, ...] = ()
    qualified: tuple[QualifiedValue, ...] = ()


def _missing(total: Totals, held: Held, index: int) -> int | None:
    known, unknown = held.sums[index], held.sums[index + 1]
    if total.unknown - unknown > 0:
        return None
    return total.known - known


def _rebuildable(element: WorkingSetElement, link: Link, *, sourced: bool) -> bool:
    """Whether an absent element can be made usable at the candidate (6.3, M5)."""
    movable = sourced and element.may_move and link.transfer_open
    if movable and link.bw and link.rtt is not None:
        return element.element_size is not None
    return (
        element.element_class not in NOT_RECOMPUTABLE
        and element.tokens_to_reprocess is not None
        and bool(link.prefill_rate)
    )


def _element_exclusions(
    csci_id: CsciId, prepared: PreparedWorkingSet, held: Held, link: Link
) -> list[Exclusion]:
    """M28 (an element that may not move stays) and required presence (6.3, M4).

    A required element that cannot be re-obtained (a tool result: the tool is not
    idempotent, 6.3) whose presence the candidate reports unknown or doubtful excludes the
    candidate with that condition: unknown is not absent (MSG-6) and cannot satisfy a
    constraint (7.5, M20), so it is not valued with a hypothetical transfer either.
    """
    found: list[Exclusion] = []
    for element in prepared.pinned:
        key = (prepared.tenant, element.reuse_key)
        if key not in held.keys:
            found.append(
                Exclusion(
                    csci_id,
                    Reason.ELEMENT_MAY_NOT_MOVE,
                    Element.WORKING_SET,
                    "element held at candidate",
                    "present (may-move false)",
                    held.doubtful.get(key, Presence.ABSENT).value,
                    element.reuse_key,
                    f"{element.element_class.value} may not move to {csci_id}",
                )
            )
    for element in prepared.required:
        key = (prepared.tenant, element.reuse_key)
        sourced = key not in prepared.sourceless
        if key in held.keys or not element.may_move:
            continue
        unsure = key in held.doubtful and element.element_class in NOT_RECOMPUTABLE
        if not unsure and _rebuildable(element, link, sourced=sourced):
            continue
        if key in held.doubtful:
            found.append(
                unusable(
                    csci_id,
                    Element.PRESENCE,
                    held.doubtful[key],
                    ("presence", "present"),
                    element.reuse_key,
                )
            )
            continue
        reason = (
            Reason.REQUIRED_TOOL_RESULT_ABSENT
            if element.element_class is ElementClass.TOOL_RESULT
            else Reason.REQUIRED_ELEMENT_ABSENT
        )
        window = "" if link.transfer_open else ", transfer window closed"
        found.append(
            Exclusion(
                csci_id,
                reason if link.transfer_open else Reason.TRANSFER_WINDOW_CLOSED,
                Element.WORKING_SET,
                "presence or transfer or recompute",
                "usable",
                Presence.ABSENT.value,
                element.reuse_key,
                f"required {element.element_class.value} cannot be made usable{window}",
            )
        )
    return found


def _costs(
    prepared: PreparedWorkingSet, held: Held, link: Link
) -> tuple[int | None, float | None, float | None]:
    """Missing bytes, and the time to make the missing part usable by transfer (elements no
    candidate holds being recomputed) or by recompute (tool results being transferred)."""
    missing = _missing(prepared.state_bytes, held, STATE)
    if missing == 0:
        return 0, 0.0, 0.0
    bw, rtt, prefill = link.bw, link.rtt, link.prefill_rate
    movable = link.transfer_open and bool(bw) and rtt is not None
    transfer: float | None = None
    rebuild_sourceless: float | None = 0.0
    if prepared.sourceless:
        tokens = prepared.sourceless_tokens
        rebuild_sourceless = None
        if not prepared.sourceless_forced and not tokens.unknown and prefill:
            rebuild_sourceless = recompute_time(tokens.known, prefill)
    if (
        missing is not None
        and movable
        and bw
        and rtt is not None
        and rebuild_sourceless is not None
    ):
        moved = missing - prepared.sourceless_bytes.known
        transfer = (transfer_time(moved, bw, rtt) if moved > 0 else 0.0) + rebuild_sourceless
    recompute: float | None = None
    tokens_missing = _missing(prepared.tokens, held, TOKENS)
    if tokens_missing is not None and prefill:
        recompute = recompute_time(tokens_missing, prefill)
        forced = _missing(prepared.forced_bytes, held, FORCED)
        if forced:
            if prepared.sourceless_forced or not movable or not bw or rtt is None:
                recompute = None
            else:
                recompute += transfer_time(forced, bw, rtt)
    return missing, transfer, recompute


def plan(
    csci_id: CsciId, prepared: PreparedWorkingSet, view: ResourceView, link: Link, now: Timestamp
) -> StoragePlan:
    """Value the storage dimension of one candidate element by element (P5, 6.8 step 2)."""
    return valued(csci_id, prepared, scan(prepared, view, now), link)


def valued(csci_id: CsciId, prepared: PreparedWorkingSet, held: Held, link: Link) -> StoragePlan:
    """The storage plan of a candidate whose state was scanned into ``held`` (by a decision's
    :class:`Scans`)."""
    missing_bytes, transfer, recompute = _costs(prepared, held, link)
    cost = state_cost(transfer, recompute)
    exclusions: tuple[Exclusion, ...] = ()
    if prepared.pinned or prepared.required:
        exclusions = tuple(_element_exclusions(csci_id, prepared, held, link))
    qualified: tuple[QualifiedValue, ...] = ()
    if held.doubtful:
        qualified = tuple(
            reported(csci_id, Element.PRESENCE, condition, key[1])
            for key, condition in held.doubtful.items()
        )
    return StoragePlan(
        missing_bytes,
        _missing(prepared.accelerator_bytes, held, ACCEL),
        transfer,
        recompute,
        held.retrieval,
        None if cost is None else cost + held.retrieval,
        len(held.keys),
        exclusions,
        qualified,
    )


def held_somewhere(
    prepared: PreparedWorkingSet,
    views: Iterable[ResourceView],
    now: Timestamp,
    scans: Scans | None = None,
) -> tuple[set[Key], set[Key]]:
    """The working-set elements some candidate holds usably, split into those a transfer can
    take from a holder and those every holder keeps in place ('stay-in-place' governance of
    the copy, M28). Stops once every element has a holder that lets it move. The scans are
    kept in ``scans`` for the candidates' plans."""
    scan_of = scan if scans is None else scans.scan
    movable: set[Key] = set()
    pinned: set[Key] = set()
    wanted = len(prepared.elements)
    for view in views:
        if not view.state:
            continue
        for key in scan_of(prepared, view, now).keys:
            if view.state[key].may_not_move:
                pinned.add(key)
            else:
                movable.add(key)
        if len(movable) == wanted:
            break
    return movable, pinned - movable
